#!/usr/bin/env node
// What the DynamoDB emulator (dynalite) spends on one job's two ledger writes, by how they are written: the
// idempotent-naive baseline's tiny item; poison-guard's item with its attempt history stored as one map per
// entry and ended by an UpdateItem (before 2026-12-02), with string entries and ended by an UpdateItem of what
// changed (until the small-item put), ended by a conditional PutItem of the whole item (items within one write
// unit, in the attribute format), and the compact format (poison-guard.ledger.item-format=compact: version, expiry
// and history as attributes, the rest of the record as one JSON string), created and ended by a put; and the ending put
// whole in a BatchWriteItem with 7 other jobs' (the service's default for a succeeded ending since 2026-12-06). Starts its own dynalite, runs the shapes interleaved round by round, and prints
// dynalite's CPU milliseconds per job (a conditional create, then the ending write) and a verdict line. Needs the emulator installed: run the tests once, or
// `npm ci --prefix infra/local`.
//
//   node scripts/emulator-item-cost.mjs [jobs-per-round=4000] [rounds=3] [concurrency=8]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The same launcher the tests and the local run use (it keeps dynalite up when a client gives up on a request).
const server = path.join(root, 'infra/local/dynalite-server.js');
const cli = path.join(root, 'infra/local/node_modules/dynalite/cli.js');
const [jobs, rounds, concurrency] = [4000, 3, 8].map((d, i) => Number(process.argv[2 + i] ?? d));
if (!fs.existsSync(cli)) {
  console.error(`dynalite is not installed at ${path.relative(root, cli)}: run \`npm ci --prefix infra/local\` first`);
  process.exit(2);
}
if (process.platform !== 'linux') {
  console.error('reads the emulator\'s CPU time from /proc: Linux only');
  process.exit(2);
}

const port = 20000 + Math.floor(Math.random() * 20000);
const dynalite = spawn(process.execPath, [server, '--port', String(port)], { stdio: 'ignore' });
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function call(operation, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/', agent,
      headers: {
        'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `DynamoDB_20120810.${operation}`,
        'X-Amz-Date': '20261202T000000Z', 'Content-Length': Buffer.byteLength(data),
        Authorization: 'AWS4-HMAC-SHA256 Credential=local/20261202/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0',
      },
    }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${operation}: ${text}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The emulator's CPU time so far, in ms (user + system, from /proc; clock ticks are 10 ms on Linux). */
function emulatorCpuMs() {
  const fields = fs.readFileSync(`/proc/${dynalite.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const n = (v) => ({ N: String(v) });
const s = (v) => ({ S: v });
const now = Date.now();
const entry = (outcome, ended) => ({
  number: 1, generation: 1, outcome, startedAt: now, ...(ended ? { endedAt: now + 300 } : {}), worker: 'worker-1', othersInFlight: 5,
});
const asMap = (e) => ({ M: Object.fromEntries(Object.entries(e).map(([k, v]) => [k, typeof v === 'number' ? n(v) : s(v)])) });
const asText = (e) => s(JSON.stringify(e));

/** poison-guard's create (a conditional put of the whole item) and ending update, with history entries encoded by {@code encode}. */
function poisonGuard(encode) {
  return [
    (table, id) => ['PutItem', {
      TableName: table,
      Item: {
        jobId: s(`tenant-a/${id}`), tenant: s('tenant-a'), jobType: s('permit-report'), state: s('ACTIVE'), generation: n(1),
        attempt: n(1), version: n(1), leaseOwner: s('worker-1'), leaseUntil: n(now + 30000), firstSeen: n(now), updatedAt: n(now),
        writeToken: s('0123456789abcdef0123456789abcdef'), history: { L: [encode(entry('RUNNING', false))] },
      },
      ConditionExpression: 'attribute_not_exists(#key) OR #expiresAt < :now',
      ExpressionAttributeNames: { '#key': 'jobId', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: { ':now': n(Math.floor(now / 1000)) },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }],
    (table, id) => ['UpdateItem', {
      TableName: table,
      Key: { jobId: s(`tenant-a/${id}`) },
      UpdateExpression: 'SET #state = :state, #history[0] = :historyLast, #updatedAt = :updatedAt, #version = :version, '
        + '#expiresAt = :expiresAt, #writeToken = :writeToken, #effects = :effects REMOVE #leaseOwner, #leaseUntil',
      ConditionExpression: '#version = :expected',
      ExpressionAttributeNames: {
        '#state': 'state', '#history': 'history', '#updatedAt': 'updatedAt', '#version': 'version', '#expiresAt': 'expiresAt',
        '#writeToken': 'writeToken', '#effects': 'effects', '#leaseOwner': 'leaseOwner', '#leaseUntil': 'leaseUntil',
      },
      ExpressionAttributeValues: {
        ':state': s('SUCCEEDED'), ':historyLast': encode(entry('SUCCEEDED', true)), ':updatedAt': n(now + 300), ':version': n(2),
        ':expiresAt': n(Math.floor(now / 1000) + 7 * 86400), ':writeToken': s('fedcba9876543210fedcba9876543210'),
        ':effects': { M: { 'completion-notice': n(1) } }, ':expected': n(1),
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    }],
  ];
}

/** poison-guard now: the same create, then the whole ended item put on the condition of its version. */
function poisonGuardPut() {
  return [poisonGuard(asText)[0], (table, id) => ['PutItem', {
    TableName: table,
    Item: {
      jobId: s(`tenant-a/${id}`), tenant: s('tenant-a'), jobType: s('permit-report'), state: s('SUCCEEDED'), generation: n(1),
      attempt: n(1), version: n(2), firstSeen: n(now), updatedAt: n(now + 300), expiresAt: n(Math.floor(now / 1000) + 7 * 86400),
      writeToken: s('fedcba9876543210fedcba9876543210'), history: { L: [asText(entry('SUCCEEDED', true))] },
      effects: { M: { 'completion-notice': n(1) } },
    },
    ConditionExpression: '#version = :expected',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':expected': n(1) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  }]];
}

/** The compact format: four or five attributes, the record's fields in one JSON string. */
function compact() {
  const record = (state, ended) => s(JSON.stringify({
    tenant: 'tenant-a', jobType: 'permit-report', state, generation: 1, attempt: 1,
    ...(ended ? { effects: { 'completion-notice': 1 } } : { leaseOwner: 'worker-1', leaseUntil: now + 30000 }),
    firstSeen: now, updatedAt: now + (ended ? 300 : 0),
  }));
  return [(table, id) => ['PutItem', {
    TableName: table,
    Item: { jobId: s(`tenant-a/${id}`), version: n(1), history: { L: [asText(entry('RUNNING', false))] }, record: record('ACTIVE', false) },
    ConditionExpression: 'attribute_not_exists(#key) OR #expiresAt < :now',
    ExpressionAttributeNames: { '#key': 'jobId', '#expiresAt': 'expiresAt' },
    ExpressionAttributeValues: { ':now': n(Math.floor(now / 1000)) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  }], (table, id) => ['PutItem', {
    TableName: table,
    Item: {
      jobId: s(`tenant-a/${id}`), version: n(2), expiresAt: n(Math.floor(now / 1000) + 7 * 86400),
      history: { L: [asText(entry('SUCCEEDED', true))] }, record: record('SUCCEEDED', true),
    },
    ConditionExpression: '#version = :expected',
    ExpressionAttributeNames: { '#version': 'version' },
    ExpressionAttributeValues: { ':expected': n(1) },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  }]];
}

const shapes = {
  'idempotent-naive': [
    (table, id) => ['PutItem', { TableName: table, Item: { jobId: s(id), status: s('IN_PROGRESS') }, ConditionExpression: 'attribute_not_exists(jobId)' }],
    (table, id) => ['UpdateItem', {
      TableName: table, Key: { jobId: s(id) }, UpdateExpression: 'SET #s = :done',
      ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':done': s('COMPLETED') },
    }],
  ],
  'poison-guard, map entries': poisonGuard(asMap),
  'poison-guard, string entries': poisonGuard(asText),
  'poison-guard, ending put': poisonGuardPut(),
  'poison-guard, compact item': compact(),
  // The service's default since the twenty-sixth table: the ending put whole, without its condition, in a BatchWriteItem
  // shared with the endings of the jobs that end with it (about 8 to a batch in the bench at concurrency 8).
  'poison-guard, batched ending': poisonGuardPut(),
};
/** Shapes whose endings go BatchWriteItem, this many jobs' to a request. */
const batched = { 'poison-guard, batched ending': 8 };

async function run(shape, round) {
  const table = `cost-${round}-${Object.keys(shapes).indexOf(shape)}`;
  await call('CreateTable', {
    TableName: table, BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [{ AttributeName: 'jobId', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'jobId', KeyType: 'HASH' }],
  });
  while (JSON.parse(await call('DescribeTable', { TableName: table })).Table.TableStatus !== 'ACTIVE') {
    await new Promise((r) => setTimeout(r, 50));
  }
  let next = 0;
  const cpu0 = emulatorCpuMs();
  const worker = batched[shape] ? async () => {
    // Each worker starts its share of a batch one job at a time, then ends them together.
    for (;;) {
      const ids = [];
      for (let k = 0; k < batched[shape] && next < jobs; k++) ids.push(next++);
      if (!ids.length) return;
      for (const i of ids) await call(...shapes[shape][0](table, `job-${i}`));
      const puts = ids.map((i) => ({ PutRequest: { Item: shapes[shape][1](table, `job-${i}`)[1].Item } }));
      await call('BatchWriteItem', { RequestItems: { [table]: puts } });
    }
  } : async () => {
    for (let i = next++; i < jobs; i = next++) {
      for (const step of shapes[shape]) {
        await call(...step(table, `job-${i}`));
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const perJob = (emulatorCpuMs() - cpu0) / jobs;
  await call('DeleteTable', { TableName: table });
  return perJob;
}

try {
  for (let tries = 0; ; tries++) {
    try {
      await call('ListTables', {});
      break;
    } catch (e) {
      if (tries > 100) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await run('idempotent-naive', 'warm');
  const results = Object.fromEntries(Object.keys(shapes).map((k) => [k, []]));
  for (let round = 1; round <= rounds; round++) {
    for (const shape of Object.keys(shapes)) {
      results[shape].push(await run(shape, round));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`dynalite CPU ms per job (a create and an ending write), ${jobs} jobs x ${rounds} rounds, concurrency ${concurrency}`);
  console.log(`${'item shape'.padEnd(32)}${'median'.padStart(8)}  rounds`);
  for (const [shape, xs] of Object.entries(results)) {
    console.log(`${shape.padEnd(32)}${median(xs).toFixed(2).padStart(8)}  ${xs.map((x) => x.toFixed(2)).join(' ')}`);
  }
  const update = median(results['poison-guard, string entries']);
  const put = median(results['poison-guard, ending put']);
  const small = median(results['poison-guard, compact item']);
  const everyRound = (a, b) => results[a].every((x, i) => x < results[b][i]);
  const cheaper = small < put && everyRound('poison-guard, compact item', 'poison-guard, ending put');
  const change = (x, y) => `${(100 * Math.abs(1 - x / y)).toFixed(0)}% ${x < y ? 'cheaper' : 'dearer'}`;
  const inBatches = median(results['poison-guard, batched ending']);
  const batchedCheaper = everyRound('poison-guard, batched ending', 'poison-guard, ending put');
  console.log(`VERDICT: ${cheaper && batchedCheaper ? 'PASS' : 'FAIL'} the batched ending is ${change(inBatches, put)} than the `
    + `conditional ending put (${batchedCheaper ? 'in every round' : 'not in every round'}); the compact item is ${change(small, put)} than the attribute item `
    + `(ending put) for the emulator (median; ${cheaper ? 'in every round' : 'not in every round'}); the ending put is `
    + `${change(put, update)} than the ending update${everyRound('poison-guard, ending put', 'poison-guard, string entries') ? ' in every round' : ''}; `
    + `idempotent-naive ${median(results['idempotent-naive']).toFixed(2)} ms`);
} finally {
  dynalite.kill();
  agent.destroy();
}
