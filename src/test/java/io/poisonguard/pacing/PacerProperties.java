package io.poisonguard.pacing;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.LongRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Whatever the rate, the callers' timing and the sleepers' lateness, no second holds more calls than the rate allows. */
class PacerProperties {
    @Property(tries = 200)
    void noOneSecondWindowHoldsMoreCallsThanTheRate(@ForAll @DoubleRange(min = 0.5, max = 50_000) double rate,
                                                    @ForAll @LongRange(min = 0, max = 3_000_000) long maxLateness,
                                                    @ForAll long seed) throws InterruptedException {
        Random random = new Random(seed);
        FakeTime time = new FakeTime(slept -> maxLateness == 0 ? 0 : (long) (random.nextDouble() * maxLateness));
        Pacer pacer = new Pacer(rate, time);
        long interval = (long) (Pacer.MARGIN * 1_000_000_000L / rate);
        int calls = (int) Math.min(150_000, Math.max(30, rate * 2.5));
        List<Long> went = new ArrayList<>(calls);
        for (int i = 0; i < calls; i++) {
            // Callers come in bursts and lulls: often at once, sometimes after a gap of up to two intervals.
            if (random.nextInt(3) == 0) {
                time.advance((long) (random.nextDouble() * 2 * interval));
            }
            pacer.acquire();
            went.add(time.now);
        }
        long limit = (long) Math.ceil(rate);
        for (int from = 0, to = 0; from < went.size(); from++) {
            while (to < went.size() && went.get(to) - went.get(from) < 1_000_000_000L) {
                to++;
            }
            if (to - from > limit) {
                throw new AssertionError((to - from) + " calls within one second at a rate of " + rate + " from call " + from);
            }
        }
    }
}
