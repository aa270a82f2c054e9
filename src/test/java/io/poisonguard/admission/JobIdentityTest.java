package io.poisonguard.admission;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.poisonguard.admission.Messages.job;
import static org.junit.jupiter.api.Assertions.assertEquals;

class JobIdentityTest {

    @Test
    void theJobIdAttributeWinsOverTheBodyAndTheMessageId() {
        JobIdentity id = JobIdentity.of(job().with(WireAttributes.JOB_ID, " job-42 ").body("{\"jobId\":\"body-7\"}").messageId("m-1").build());

        assertEquals(new JobIdentity("job-42", JobIdentity.Source.ATTRIBUTE), id);
    }

    @Test
    void withoutTheAttributeATopLevelJobIdFieldOfTheBodyIsUsed() {
        JobIdentity id = JobIdentity.of(job().body("{\"tenant\":{\"jobId\":\"nested\"},\"items\":[1,{\"jobId\":\"x\"}],\"jobId\":\"body-7\"}").build());

        assertEquals(new JobIdentity("body-7", JobIdentity.Source.BODY), id);
    }

    @Test
    void withNeitherTheMessageIdIsTheIdentity() {
        JobIdentity id = JobIdentity.of(job().body("{\"permitId\":\"P-1\"}").messageId("m-9").build());

        assertEquals(new JobIdentity("m-9", JobIdentity.Source.MESSAGE_ID), id);
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"jobId\": ", "{\"jobId\" \"x\"}", "{\"jobId\":]", "not json at all", "", "[\"jobId\",\"x\"]",
            "{\"nested\":{\"jobId\":\"inner\"}}", "{\"jobId\":42}", "{\"jobId\":\"   \"}", "{\"jobId\":null}"})
    void aMalformedBodyOrOneWithoutAUsableTopLevelJobIdFallsBackToTheMessageId(String body) {
        JobIdentity id = JobIdentity.of(job().body(body).messageId("m-3").build());

        assertEquals(new JobIdentity("m-3", JobIdentity.Source.MESSAGE_ID), id);
    }

    @Test
    void aBlankAttributeIsIgnored() {
        // A blank value reads as no attribute at all (InboundMessage.attribute), and admission takes it so.
        assertEquals(JobIdentity.Source.BODY,
                JobIdentity.of(job().with(WireAttributes.JOB_ID, "  ").body("{\"jobId\":\"body-7\"}").build()).source());
    }

    @Test
    void anAttributeWithControlCharactersOrOverlongIsNotUsable() {
        assertEquals(new JobIdentity("m-4", JobIdentity.Source.MESSAGE_ID),
                JobIdentity.of(job().with(WireAttributes.JOB_ID, "job\u0000-1").body("{\"jobId\":\"body-7\"}").messageId("m-4").build()));
        assertEquals(new JobIdentity("m-5", JobIdentity.Source.MESSAGE_ID),
                JobIdentity.of(job().with(WireAttributes.JOB_ID, "j".repeat(257)).messageId("m-5").build()));
    }

    @Test
    void anIdentityOfTheMaximumLengthIsKept() {
        String longest = "j".repeat(256);

        assertEquals(longest, JobIdentity.of(job().with(WireAttributes.JOB_ID, longest).build()).jobId());
    }

    @Test
    void theSameMessageAlwaysYieldsTheSameIdentity() {
        InboundMessage m = job().body("{\"jobId\":\"body-7\"}").build();

        assertEquals(JobIdentity.of(m), JobIdentity.of(m));
    }
}
