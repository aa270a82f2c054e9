package io.poisonguard.sqs;

import io.poisonguard.config.Names;
import io.poisonguard.replay.ArchivedMessage;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.services.sqs.SqsClient;
import software.amazon.awssdk.services.sqs.model.BatchResultErrorEntry;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchRequest;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResponse;
import software.amazon.awssdk.services.sqs.model.DeleteMessageBatchResultEntry;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlRequest;
import software.amazon.awssdk.services.sqs.model.GetQueueUrlResponse;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Deleting dead-letter copies after a replay: SQS answers a batch delete entry by entry, and an entry it
 * refuses (a receipt handle that expired while the copy was held, say) leaves that copy in the DLQ. The
 * archive says how many copies are really gone, so the operator's count is not the number it asked for.
 */
class ArchiveDeleteTest {

    @Test
    void aCopyWhoseDeleteSqsRefusedIsNotCountedAsDeleted() {
        List<DeleteMessageBatchRequest> asked = new ArrayList<>();
        SqsClient sqs = new SqsClient() {
            @Override
            public GetQueueUrlResponse getQueueUrl(GetQueueUrlRequest r) {
                return GetQueueUrlResponse.builder().queueUrl("http://sqs.local/" + r.queueName()).build();
            }

            @Override
            public DeleteMessageBatchResponse deleteMessageBatch(DeleteMessageBatchRequest r) {
                asked.add(r);
                // Every entry but the second of each batch is deleted; the second's receipt handle has expired.
                DeleteMessageBatchResponse.Builder answer = DeleteMessageBatchResponse.builder();
                List<DeleteMessageBatchResultEntry> ok = new ArrayList<>();
                List<BatchResultErrorEntry> failed = new ArrayList<>();
                for (int i = 0; i < r.entries().size(); i++) {
                    String id = r.entries().get(i).id();
                    if (i == 1) {
                        failed.add(BatchResultErrorEntry.builder().id(id).code("ReceiptHandleIsInvalid").senderFault(true)
                                .message("The receipt handle has expired").build());
                    } else {
                        ok.add(DeleteMessageBatchResultEntry.builder().id(id).build());
                    }
                }
                return answer.successful(ok).failed(failed).build();
            }

            @Override
            public String serviceName() {
                return "sqs";
            }

            @Override
            public void close() {
            }
        };
        SqsPayloadArchive archive = new SqsPayloadArchive(sqs, new QueueUrls(sqs, new Names("ad")));
        List<ArchivedMessage> copies = IntStream.range(0, 13)
                .mapToObj(i -> new ArchivedMessage("m" + i, "receipt-" + i, "{}", Map.of())).toList();

        int deleted = archive.delete(copies);

        assertEquals(2, asked.size(), "13 copies go in batches of 10 and 3");
        assertEquals(11, deleted, "two entries (one per batch) were refused, so 11 of the 13 copies are gone");
    }
}
