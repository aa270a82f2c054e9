package io.poisonguard.replay;

/** Why a replay was not done, with the HTTP status the operator API answers. */
public enum Refusal {
    NOT_FOUND(404),
    /** Only QUARANTINED jobs replay. */
    NOT_QUARANTINED(409),
    /** Another replay or resolve changed the job first. */
    CONFLICT(409),
    TENANT_NOT_AUTHORIZED(403),
    /** The main queue did not take the replayed message; nothing changed. */
    SEND_FAILED(503),
    /**
     * A store or queue the replay needed (the payload vault, the dead-letter queue, the quarantine record) did not
     * answer after the job moved to REPLAYING: nothing was sent and the job was put back; it may be tried again.
     */
    UNAVAILABLE(503),
    /**
     * No copy of the payload was found, but the dead-letter scan stopped at its bound before looking at
     * every message: not proof of loss, so the job keeps its state and the action may be tried again.
     */
    PAYLOAD_NOT_FOUND_YET(503),
    /**
     * The vault holds an entry for the job that does not open here (sealed with a key this service is not
     * given, or caught mid-rewrite): the payload may well exist, so nothing is concluded.
     */
    PAYLOAD_UNREADABLE(503);

    private final int status;

    Refusal(int status) {
        this.status = status;
    }

    public int status() {
        return status;
    }
}
