package io.poisonguard.disposition;

import io.poisonguard.ladder.Ladder;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Decisions.visibilityFor: SQS caps a message's visibility at 12 hours from its receive. */
class VisibilityForTest {

    @Property(tries = 200)
    void aDelayWithinTheRoomLeftIsKeptAsIs(
            @ForAll @LongRange(min = 0, max = 43_200) long sinceReceive, @ForAll @LongRange(min = 0, max = 43_200) long delay) {
        Duration result = Decisions.visibilityFor(Duration.ofSeconds(delay), Duration.ofSeconds(sinceReceive));

        if (delay + sinceReceive <= 43_200) {
            assertEquals(Duration.ofSeconds(delay), result);
        } else {
            assertEquals(Ladder.SQS_MAX_VISIBILITY.minusSeconds(sinceReceive), result);
        }
    }

    @Property(tries = 200)
    void visibilityNeverReachesPastTwelveHoursFromReceiveAndIsNeverNegative(
            @ForAll @LongRange(min = 0, max = 200_000) long sinceReceive, @ForAll @LongRange(min = 0, max = 200_000) long delay) {
        Duration result = Decisions.visibilityFor(Duration.ofSeconds(delay), Duration.ofSeconds(sinceReceive));

        assertTrue(!result.isNegative(), result.toString());
        assertTrue(result.compareTo(Duration.ofSeconds(delay)) <= 0);
        if (sinceReceive <= 43_200) {
            assertTrue(result.plusSeconds(sinceReceive).compareTo(Ladder.SQS_MAX_VISIBILITY) <= 0);
        } else {
            assertEquals(Duration.ZERO, result);
        }
    }

    @Property(tries = 50)
    void aFullTwelveHourDelayRightAfterReceiveIsAllowed(@ForAll @LongRange(min = 0, max = 1_000) long millisSinceReceive) {
        Duration result = Decisions.visibilityFor(Ladder.SQS_MAX_VISIBILITY, Duration.ofMillis(millisSinceReceive));

        assertEquals(Ladder.SQS_MAX_VISIBILITY.minusMillis(millisSinceReceive), result);
    }
}
