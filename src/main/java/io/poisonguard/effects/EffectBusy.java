package io.poisonguard.effects;

import io.poisonguard.failure.FailureClass;
import io.poisonguard.failure.JobFailure;

/** Another attempt of the same job is performing this effect right now; try again later. */
public class EffectBusy extends JobFailure {
    public EffectBusy(String jobId, String effect) {
        super(FailureClass.TRANSIENT, "effect '" + effect + "' of job " + jobId + " is being performed by another attempt");
    }
}
