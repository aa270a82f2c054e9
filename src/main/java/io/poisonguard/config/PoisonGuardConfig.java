package io.poisonguard.config;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.ladder.Jitter;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * All of poison-guard's configuration, under {@code poison-guard.}. Every key is documented in the
 * README's configuration table. Per-class defaults live in {@code application.properties}.
 */
@ConfigMapping(prefix = "poison-guard")
public interface PoisonGuardConfig {

    /** Prefix of every queue and table name: {@code <prefix>-jobs}, {@code <prefix>-ledger}, ... */
    @WithDefault("poison-guard")
    String prefix();

    /** Identifies this worker in leases and attempt history; defaults to host name and process id. */
    Optional<String> workerId();

    Resources resources();

    Consumer consumer();

    Admission admission();

    Retention retention();

    Failures failure();

    Replay replay();

    Alerts alerts();

    Tokens tokens();

    OpsApi opsApi();

    Ownership ownership();

    /**
     * Job types whose poison is dropped, not quarantined: cheap, idempotent work (telemetry, cache warming) where a
     * lost item costs nothing. Counted by class and type, logged with job id and reason, no payload kept.
     */
    Optional<Set<String>> disposableJobTypes();

    /** Who owns quarantined work, and how soon they must look at it. */
    interface Ownership {
        /** The owner of a job no entry of {@code owners} matches; its records and alerts are flagged. */
        @WithDefault("operations")
        String defaultOwner();

        /** The default owner's acknowledge deadline, counted from quarantine. */
        @WithDefault("4h")
        Duration acknowledgeWithin();

        /** The default owner's resolve deadline (replayed or discarded), counted from quarantine. */
        @WithDefault("3d")
        Duration resolveWithin();

        /** How often overdue records are looked for (and escalated, once per stage). */
        @WithDefault("1m")
        Duration checkInterval();

        /** Owners by team name: {@code poison-guard.ownership.owners."payments".job-types=invoice,refund}. */
        Map<String, Team> owners();

        interface Team {
            /** Job types this team owns (with tenants: only those tenants' jobs of these types). */
            Optional<Set<String>> jobTypes();

            /** Tenants this team owns. */
            Optional<Set<String>> tenants();

            /** This team's alert route: each of its quarantines is also POSTed here. */
            Optional<java.net.URI> webhook();

            /** This team's SNS alert route. */
            Optional<String> snsTopicArn();

            /** Where overdue records are escalated; defaults to the team's webhook. */
            Optional<java.net.URI> escalationWebhook();

            /** Defaults to ownership.acknowledge-within. */
            Optional<Duration> acknowledgeWithin();

            /** Defaults to ownership.resolve-within. */
            Optional<Duration> resolveWithin();
        }
    }

    /** The operator API ({@code /ops/*}). */
    interface OpsApi {
        /**
         * Off: every {@code /ops} path answers 404 and no token verification key is needed. On (the default), a
         * production boot without {@code mp.jwt.verify.publickey.location} or {@code mp.jwt.verify.publickey} stops,
         * naming the keys.
         */
        @WithDefault("true")
        boolean enabled();

        /**
         * Most quarantine records one listing call reads (a filter on job type, status or age over a large table);
         * beyond it the page answers with what it found and a cursor to go on.
         */
        @WithDefault("1000")
        int listingReadBudget();
    }

    /** What an operator API token must carry besides a valid signature and issuer (mp.jwt.verify.*). */
    interface Tokens {
        /** The audience ({@code aud}) a token must name: a token minted for another service is refused. */
        @WithDefault("poison-guard")
        String audience();

        /** The longest a token may be valid ({@code exp} minus {@code iat}): a token minted for a year is refused. */
        @WithDefault("12h")
        Duration maxLifetime();

        /** How far in the future an {@code iat} may lie (clocks differ). */
        @WithDefault("60s")
        Duration clockSkew();
    }

    Monitoring monitoring();

    Attempt attempt();

    Systemic systemic();

    LedgerGate ledgerGate();

    Ledger ledger();

    /** The ledger's keys. */
    interface Ledger {
        /**
         * For the upgrade from a version whose ledger was keyed by job id alone: every copy also looks for an
         * item under the bare job id (one more read per message, first deliveries included). This tenant's item
         * is moved to its tenant-scoped key; another tenant's makes the copy a {@code tenant-mismatch}
         * quarantine. Turn it off once the old items have expired (the longest retention).
         */
        @WithDefault("false")
        boolean legacyKeys();

        /**
         * How a ledger item is written. Both formats are always read, and an item is rewritten in the configured
         * one on its job's next write. {@code compact} keeps only the version, the expiry and the history as
         * attributes of their own and the rest of the record as one JSON string: the table does less work per
         * write, which is the default. A release from before the compact format (2026-12-05) cannot read its
         * items: a fleet upgrading from one, or that may roll back to one, sets {@code attributes} until it cannot
         * (see the README's Known limits).
         */
        @WithDefault("compact")
        ItemFormat itemFormat();

        /**
         * Succeeded attempts' endings are put whole in shared {@code BatchWriteItem} requests, up to 25 jobs' to one, while the
         * attempt's lease has at least half its length to run (no other worker writes the item meanwhile, so the version
         * condition protects nothing); this many such requests may be on the wire at once. Every other write keeps its
         * condition. 0 writes each ending in a request of its own, conditionally. The role needs
         * {@code dynamodb:BatchWriteItem} on the ledger table; without it every ending falls back to its own write.
         */
        @WithDefault("2")
        int endingBatchesInFlight();

        enum ItemFormat {
            /** One attribute per record field (the format every release reads). */
            ATTRIBUTES,
            /** Version, expiry and history as attributes, the rest as one JSON string. */
            COMPACT
        }
    }

    /** The ledger-health gate: consumption pauses while the ledger (DynamoDB) does not answer. */
    interface LedgerGate {
        /** While paused, how often one read probes the ledger. */
        @WithDefault("5s")
        Duration probeInterval();

        /**
         * How long a finished attempt keeps trying to record its outcome while the ledger does not
         * answer (its message is kept hidden meanwhile); past it the copy is left to redeliver.
         */
        @WithDefault("15m")
        Duration outcomePatience();
    }

    @WithName("dead-letter")
    DeadLetter deadLetter();

    @WithName("payload-vault")
    PayloadVaultSettings payloadVault();

    Notices notices();

    /** Where completion notices go. */
    interface Notices {
        /**
         * Send notices to the FIFO queue {@code <prefix>-notices.fifo} with a deduplication id derived from
         * the tenant, the job id and the effect: a notice sent again after a worker died before recording it
         * is absorbed by SQS (within its 5-minute deduplication window). Off: a standard queue, at-least-once,
         * with {@code job-id} as the consumer's deduplication key.
         */
        @WithDefault("false")
        boolean fifo();

        /**
         * Notices of jobs finishing together share one SendMessageBatch. While the last batch carried more
         * than one notice, a batch waits up to this long for more before it is sent, and never more than half a
         * recent SendMessageBatch round trip; a lone notice never waits. 0: batches carry only what queued while
         * every sender was on the wire.
         */
        @WithName("batch-linger")
        @WithDefault("5ms")
        Duration batchLinger();

        /**
         * Notice batches that may be on the wire at once, 1-10. A batch is sent at once when no other is on the
         * wire; while one is, the next gathers behind it and is sent beside it only once it is full (ten
         * notices). Under load every batch then leaves full; this caps how many full batches a worker has in
         * flight.
         */
        @WithName("batches-in-flight")
        @WithDefault("4")
        int batchesInFlight();
    }

    /**
     * The payload vault: each quarantined job's payload kept by job id (sealed with AES-256-GCM) beside its
     * quarantine record, so replay and the payload view find it in one keyed read however deep the DLQ is.
     */
    interface PayloadVaultSettings {
        /** Keep payloads in the vault. Off, the dead-letter queue is the only copy (found by scanning it). */
        @WithDefault("true")
        boolean enabled();

        /** The sealing key, 32 bytes in base64 (for example {@code openssl rand -base64 32}). Required when enabled. */
        Optional<String> key();

        /** Keys earlier entries may be sealed with (after a rotation), base64, comma-separated; never used to seal. */
        Optional<List<String>> previousKeys();
    }

    /**
     * The dead-letter intake: a sweep of the DLQ that adopts messages the service did not put there
     * (SQS's redrive backstop, an operator) as REDRIVEN quarantines, so every one has a record and an alert.
     */
    interface DeadLetter {
        /** Sweep the DLQ at all. */
        @WithDefault("true")
        boolean enabled();

        /** How often the DLQ is swept. */
        @WithDefault("1m")
        Duration sweepInterval();

        /** Most DLQ messages one sweep looks at (adopted or not): bounds the receives of a sweep. */
        @WithDefault("100")
        int maxPerSweep();
    }

    /** Limits on one attempt of a handler. */
    interface Attempt {
        /**
         * Longest one attempt may run. Past it the handler thread is interrupted and the attempt counts as a
         * TIMEOUT failure, written once the thread stopped or the stop grace ran out. At most 12h less the stop grace
         * (SQS cannot keep a message hidden longer than 12 hours from its receive).
         */
        @WithDefault("5m")
        Duration deadline();

        /** Deadlines by job type, overriding {@code deadline}: {@code poison-guard.attempt.deadlines."permit-report"=30s}. */
        Map<String, Duration> deadlines();

        /**
         * How long a handler interrupted at its deadline has to stop. A thread still running after it is stuck for
         * good: the worker reports itself not live, so its orchestrator replaces it. (One interrupted at shutdown has
         * 200 ms: the shutdown grace is spent by then.)
         */
        @WithDefault("10s")
        Duration stopGrace();
    }

    /**
     * The systemic-failure guard: when many distinct jobs fail the same way, the fault is the
     * system's (a bad deploy, a broken setting), so quarantining and consuming stop instead of
     * draining the backlog into the dead-letter queue.
     */
    interface Systemic {
        /** Watch for systemic failures at all. */
        @WithDefault("true")
        boolean enabled();

        /** Distinct jobs failing in a row with one signature (class, error type, where thrown) that trip the guard. */
        @WithDefault("5")
        int sameSignature();

        /** Quarantines within {@code quarantine-window} that trip the guard. */
        @WithDefault("20")
        int maxQuarantines();

        /** The window {@code max-quarantines} is counted over. */
        @WithDefault("1m")
        Duration quarantineWindow();

        /** While tripped, how often one job is let through alone as a probe; its success resumes consumption. */
        @WithDefault("30s")
        Duration probeInterval();

        /**
         * While tripped, how often this worker reads the audit trail for an operator's resume answered by another worker
         * (the newest entry of {@code system:consumption}); one written after its trip resumes it too.
         */
        @WithDefault("5s")
        Duration fleetCheckInterval();
    }

    interface Alerts {
        /** Base URL of the operator API, for the link in each alert (the record is at {@code <base>/ops/quarantine/<jobId>}). */
        @WithDefault("http://localhost:8080")
        String operatorUrl();

        Webhook webhook();

        Sns sns();

        interface Webhook {
            /** POST each alert as JSON to this URL; unset disables the webhook. */
            Optional<java.net.URI> url();

            /** Connect and response timeout of each webhook call. */
            @WithDefault("5s")
            Duration timeout();
        }

        interface Sns {
            /** Publish each alert to this SNS topic; unset disables SNS alerts. */
            Optional<String> topicArn();

            /** Region of the topic; defaults to the SDK's region chain. */
            Optional<String> region();

            /** Endpoint override (a VPC endpoint, or a local stand-in). */
            Optional<java.net.URI> endpointOverride();

            /** How long one alert's publish may take, retries included (and each attempt's connect and read). */
            @WithDefault("5s")
            Duration timeout();
        }
    }

    interface Monitoring {
        /** How often quarantine counts, oldest ages and queue depths are refreshed for the gauges. */
        @WithDefault("30s")
        String refresh();
    }

    interface Replay {
        /** Replayed messages sent per second, at most (a second load spike must not become an outage). */
        @WithDefault("5")
        double rate();

        /** How long a bulk replay waits for its canary's outcome before it stops. */
        @WithDefault("2m")
        Duration canaryTimeout();

        /**
         * How long after quarantine a missing dead-letter copy still means "the quarantine is
         * completing" (retry later) rather than "the payload is gone" (UNRECOVERABLE).
         */
        @WithDefault("2m")
        Duration settleTime();

        /** Most jobs one bulk replay takes. */
        @WithDefault("500")
        int maxBatch();
    }

    interface Resources {
        /** Create queues and tables at boot when missing (local runs and tests; off against real AWS). */
        @WithDefault("false")
        boolean create();

        /** SQS MessageRetentionPeriod of the main queue; attempt limits are proven reachable within it. */
        @WithDefault("4d")
        Duration queueRetention();

        /** maxReceiveCount of the main queue's redrive policy: a backstop far above the service's own limits. */
        @WithDefault("100")
        int redriveMaxReceiveCount();
    }

    interface Consumer {
        /** Start polling at boot. */
        @WithDefault("true")
        boolean enabled();

        /** The concurrency when {@code consumer.concurrency} is unset. */
        String DEFAULT_CONCURRENCY = "8";

        /** Jobs handled at once by this process. */
        @WithDefault(DEFAULT_CONCURRENCY)
        int concurrency();

        /** Long-poll wait of each ReceiveMessage (0-20 s). */
        @WithDefault("20s")
        Duration receiveWait();

        /** Messages asked for per ReceiveMessage (1-10). */
        @WithDefault("10")
        int maxMessages();

        /**
         * Fuller receives: with fewer slots free than four fifths of the prefetch (at least a quarter of the
         * concurrency, at most max-messages), the poller waits this long for more before it receives, so a
         * backlog is read many messages per ReceiveMessage instead of one per freed slot. An idle worker does
         * not wait (its slots are free).
         */
        @WithDefault("25ms")
        Duration receiveLinger();

        /**
         * Messages received ahead of a free slot (0-100): each writes its attempt at once and waits in the worker,
         * not yet started, so a slot that frees starts its next job at once instead of after a ReceiveMessage
         * round trip and a ledger write. Unset: sized while the worker runs, twice the jobs its handlers finish
         * while a receive and its messages' intakes come in, between the concurrency and a quarter (at most 10,
         * what slow jobs keep) and 100 (at most 12 times the concurrency). Set, it is fixed. One that waits half its
         * visibility timeout without a slot is given back, its attempt recorded ABANDONED (uncounted), so a
         * prefetched copy never outlives its visibility in a busy worker; so is one whose turn comes while
         * consumption is paused. A worker killed holding them loses nothing: they reappear after their
         * visibility timeout as suspects of an ambiguous crash, like the jobs that were running.
         */
        java.util.OptionalInt prefetch();

        /** Visibility timeout given at receive, and the lease of an attempt in the ledger. */
        @WithDefault("60s")
        Duration visibilityTimeout();

        /** How often running attempts extend their visibility and lease. */
        @WithDefault("20s")
        Duration heartbeatInterval();

        /** How long shutdown waits for running handlers before leaving them to redeliver. */
        @WithDefault("25s")
        Duration shutdownGrace();

        /**
         * Circuit breakers (SmallRye Fault Tolerance names) that pause consumption while open: a
         * dependency that is down must not burn item attempts. Half-open lets one probe job through.
         */
        Optional<List<String>> pauseOnBreakers();

        /** Entries kept in a job's attempt history. */
        @WithDefault("10")
        int historySize();
    }

    interface Admission {
        /** Largest decoded body admitted, in bytes. */
        @WithDefault("262144")
        int maxBodyBytes();

        /** Largest token estimate admitted. */
        @WithDefault("50000")
        int maxTokens();

        /** Characters per token of the token estimate. */
        @WithDefault("4")
        int charsPerToken();

        /** Largest attachment-count admitted. */
        @WithDefault("20")
        int maxAttachments();
    }

    interface Retention {
        /** How long a quarantine record lives (its TTL); the DLQ keeps the payload for the same time, at most 14 days. */
        @WithDefault("14d")
        Duration quarantine();

        /** How long a SUCCEEDED ledger record stays to drop late duplicates. */
        @WithDefault("7d")
        Duration succeeded();
    }

    interface Failures {
        /** Class of an exception no rule matches. */
        @WithDefault("TRANSIENT")
        FailureClass unknownClass();

        /**
         * Ordered classification rules, each {@code fully.qualified.ExceptionType=CLASS}; checked against
         * every throwable in the cause chain, after any {@code JobFailure}.
         */
        Optional<List<String>> rules();

        /**
         * Boot even when an attempt limit can never be reached (it is logged instead). Off by default:
         * a dial the system never reads is a trap for whoever turns it during an incident.
         */
        @WithDefault("false")
        boolean allowDeadSettings();

        /** Characters kept of an error message in history and logs. */
        @WithDefault("200")
        int messageMaxChars();

        @WithName("permanent")
        ClassSettings permanent();

        @WithName("transient")
        ClassSettings transientFailures();

        @WithName("throttled")
        ClassSettings throttled();

        @WithName("dependency-down")
        ClassSettings dependencyDown();

        @WithName("crash")
        ClassSettings crash();

        @WithName("crash-ambiguous")
        ClassSettings crashAmbiguous();

        /**
         * Run jobs whose last attempt crashed alone in their worker, and count a crash against a job
         * only when it ran alone (CRASH); a crash among other jobs counts as CRASH_AMBIGUOUS. Off: every
         * crash counts as CRASH against every job that was in flight (how SQS's maxReceiveCount behaves).
         */
        @WithDefault("true")
        boolean crashAttribution();

        @WithName("admission")
        ClassSettings admission();

        @WithName("timeout")
        ClassSettings timeout();

        /** Jobs the dead-letter intake adopted from the DLQ; quarantined as found (limit 1). */
        @WithName("redriven")
        ClassSettings redriven();
    }

    interface ClassSettings {
        /** Failures of this class after which the job is quarantined. */
        int maxAttempts();

        /** First ladder delay. */
        Duration base();

        /** Growth per step (>= 1). */
        double multiplier();

        /** Largest single delay (<= 43200 s, the SQS visibility limit). */
        Duration cap();

        /** FULL, EQUAL or NONE. */
        @WithDefault("FULL")
        Jitter jitter();

        /** Quarantine instead of retrying once this long has passed since the job was first seen. */
        Optional<Duration> cutoff();

        /**
         * A budget in time as well as count: reaching {@code max-attempts} quarantines only once this
         * long has passed since the job was first seen; until then the job keeps retrying on its ladder.
         */
        Optional<Duration> maxElapsed();
    }
}
