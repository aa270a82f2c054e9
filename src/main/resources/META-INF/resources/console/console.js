// The poison-guard console: static pages over the operator API. The server decides what a token may do; the
// page only hides what would be refused. Every value is put in the page as text, never as markup.
'use strict';

const TOKEN_KEY = 'poison-guard-token';
const view = document.getElementById('view');
const statusBox = document.getElementById('status');

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function say(message, kind = 'ok') {
  statusBox.className = kind;
  statusBox.textContent = message;
}

function token() { return sessionStorage.getItem(TOKEN_KEY); }

function claims() {
  try {
    const part = token().split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(decodeURIComponent(escape(atob(part))));
  } catch { return {}; }
}

function can(role) {
  const groups = claims().groups || [];
  return groups.includes(role);
}

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${token()}`, 'Content-Type': 'application/json', Accept: 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = {};
  try { json = text ? JSON.parse(text) : {}; } catch { json = { detail: text }; }
  if (res.status === 401) {
    signOut('The token was refused (401): expired, or not for this service. Sign in again.');
  }
  // The server's clock (the Date header), to tell how old a time it reports is without trusting this machine's.
  return { status: res.status, ok: res.ok, json, serverNow: Date.parse(res.headers.get('date') || '') || Date.now() };
}

function problem(r) {
  return `${r.status} ${r.json.title || ''}: ${r.json.detail || ''}`.trim();
}

function ago(seconds) {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

function jobLink(jobId, tenant) {
  // A job that named no valid tenant has none: its page is addressed by the job id alone.
  const at = tenant == null ? '' : `${encodeURIComponent(tenant)}/`;
  return el('a', { href: `#/job/${at}${encodeURIComponent(jobId)}` }, jobId);
}

function badge(state) {
  return el('span', { class: `badge state-${state}` }, state);
}

function table(headers, rows, caption) {
  return el('table', {}, caption ? el('caption', { class: 'muted' }, caption) : null,
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows.map((r) => el('tr', {}, r.map((c) => el('td', {}, c))))));
}

// ---------------------------------------------------------------------------------------------
// Overview
// ---------------------------------------------------------------------------------------------

function groupTable(title, groups) {
  const rows = Object.entries(groups).map(([k, g]) => [k, String(g.count), ago(g.oldestAgeSeconds)]);
  return el('div', { class: 'card' }, el('h3', {}, title),
    rows.length ? table(['', 'waiting', 'oldest'], rows) : el('p', { class: 'muted' }, 'nothing waiting'));
}

function rejectionChart(rejections) {
  const reasons = Object.keys(rejections.byReason);
  const totals = new Array(60).fill(0);
  for (const r of reasons) rejections.byReason[r].forEach((n, i) => { totals[i] += n; });
  const max = Math.max(1, ...totals);
  const w = 600; const h = 120; const bw = w / 60;
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', `0 0 ${w} ${h + 16}`);
  svg.setAttribute('role', 'img');
  const sum = totals.reduce((a, b) => a + b, 0);
  svg.setAttribute('aria-label', `Admission rejections per minute, last hour: ${sum} in all, at most ${max === 1 && sum === 0 ? 0 : max} in one minute`);
  totals.forEach((n, i) => {
    const bar = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    const bh = Math.round((n / max) * h);
    bar.setAttribute('x', String(i * bw + 1)); bar.setAttribute('y', String(h - bh));
    bar.setAttribute('width', String(bw - 2)); bar.setAttribute('height', String(bh));
    bar.setAttribute('fill', '#0b5cad');
    svg.append(bar);
  });
  const label = document.createElementNS('http://www.w3.org/2000/svg', 'text');
  label.setAttribute('x', '0'); label.setAttribute('y', String(h + 13));
  label.textContent = `60 minutes to now, peak ${sum === 0 ? 0 : max}/min`;
  svg.append(label);
  const byReason = reasons.map((r) => [r, String(rejections.byReason[r].reduce((a, b) => a + b, 0))]);
  return el('div', { class: 'card' }, el('h3', {}, 'Admission rejections, last hour'), svg,
    byReason.length ? table(['reason', 'count'], byReason) : el('p', { class: 'muted' }, 'no rejections'));
}

async function overview() {
  const r = await api('GET', '/ops/overview');
  if (!r.ok) { say(problem(r), 'error'); return; }
  const o = r.json;
  const overdueRows = o.overdue.map((d) => [jobLink(d.jobId, d.tenant), d.tenant ?? '(none)', d.owner,
    el('span', { class: 'overdue' }, `${d.stage} overdue by ${ago(d.overdueSeconds)}`), badge(d.triageState)]);
  const c = o.consumption;
  view.replaceChildren(
    el('h2', {}, 'Overview'),
    el('p', {}, `${o.waiting} jobs waiting in quarantine${o.complete ? '' : ' (first records only)'}.`),
    el('div', { class: 'card' }, el('h3', { id: 'overdue-heading' }, `Overdue (${o.overdue.length})`),
      overdueRows.length ? table(['job', 'tenant', 'owner', 'deadline', 'triage'], overdueRows) : el('p', { class: 'muted' }, 'nothing overdue')),
    el('div', { class: 'grid' }, groupTable('By failure class', o.byClass), groupTable('By tenant', o.byTenant), groupTable('By owner', o.byOwner)),
    el('div', { class: 'grid' },
      el('div', { class: 'card' }, el('h3', {}, 'Consumption'),
        table(['', 'state'], [['admission', c.admit], ['systemic guard', c.systemic],
          ['workers stopped by their guard', c.stoppedWorkers == null ? "unknown (the fleet's guard board did not answer)"
            : (c.stoppedWorkers.join(', ') || 'none')], ['ledger gate', c.ledgerGate],
          ...Object.entries(c.breakers).map(([k, v]) => [`breaker ${k}`, v])])),
      o.rejections ? rejectionChart(o.rejections)
        : el('div', { class: 'card' }, el('h3', {}, 'Admission rejections'), el('p', { class: 'muted' }, 'counted for every tenant: shown to a token of every tenant'))));
}

// ---------------------------------------------------------------------------------------------
// The filtered list
// ---------------------------------------------------------------------------------------------

const CLASSES = ['', 'PERMANENT', 'TRANSIENT', 'THROTTLED', 'DEPENDENCY_DOWN', 'CRASH', 'CRASH_AMBIGUOUS', 'ADMISSION', 'TIMEOUT', 'REDRIVEN'];

async function list(params) {
  const q = new URLSearchParams(params);
  const form = el('form', { class: 'inline', 'aria-label': 'Filter' },
    el('div', {}, el('label', { for: 'f-class' }, 'Failure class'),
      el('select', { id: 'f-class', name: 'failureClass' }, CLASSES.map((c) => el('option', { value: c, selected: q.get('failureClass') === c }, c || 'any')))),
    el('div', {}, el('label', { for: 'f-tenant' }, 'Tenant'), el('input', { id: 'f-tenant', name: 'tenant', value: q.get('tenant') || '' })),
    el('div', {}, el('label', { for: 'f-type' }, 'Job type'), el('input', { id: 'f-type', name: 'jobType', value: q.get('jobType') || '' })),
    el('div', {}, el('label', { for: 'f-status' }, 'Status'),
      el('select', { id: 'f-status', name: 'status' }, ['QUARANTINED', 'REPLAYING', 'REPLAYED', 'RESOLVED', 'UNRECOVERABLE', 'any']
        .map((s) => el('option', { value: s, selected: (q.get('status') || 'QUARANTINED') === s }, s)))),
    el('button', { type: 'submit' }, 'Filter'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const [k, v] of new FormData(form)) if (v) next.set(k, v);
    location.hash = `#/list?${next}`;
  });
  const apiParams = new URLSearchParams();
  for (const [k, v] of q) if (v) apiParams.set(k, v);
  apiParams.set('limit', '50');
  const r = await api('GET', `/ops/quarantine?${apiParams}`);
  const body = [];
  if (!r.ok) {
    say(problem(r), 'error');
  } else {
    const now = Date.now();
    const rows = r.json.items.map((i) => [jobLink(i.jobId, i.tenant), i.tenant ?? '(none)', i.jobType, i.failureClass, String(i.attempts),
      i.triage.owner + (i.triage.ownerDefaulted ? ' (default)' : ''), badge(stateOf(i)), ago(Math.round((now - Date.parse(i.quarantinedAt)) / 1000))]);
    body.push(rows.length ? table(['job', 'tenant', 'type', 'class', 'attempts', 'owner', 'triage', 'age'], rows, `${rows.length} records`)
      : el('p', { class: 'muted' }, 'No records match.'));
    if (r.json.nextCursor) {
      const more = new URLSearchParams(q);
      more.set('cursor', r.json.nextCursor);
      body.push(el('a', { href: `#/list?${more}` }, 'Next page'));
    }
  }
  view.replaceChildren(el('h2', {}, 'Quarantine'), form, ...body);
}

function stateOf(record) {
  switch (record.status) {
    case 'REPLAYING': case 'REPLAYED': return 'REPLAYING';
    case 'RESOLVED': case 'UNRECOVERABLE': return 'RESOLVED';
    default: return record.triage.acknowledgedBy ? 'ACKNOWLEDGED' : 'NEW';
  }
}

// ---------------------------------------------------------------------------------------------
// One job
// ---------------------------------------------------------------------------------------------

function actionCard(title, description, controls) {
  return el('div', { class: 'card' }, el('h3', {}, title), el('p', { class: 'muted' }, description), controls);
}

/** A button that opens a confirmation step; the action runs only on "Confirm". */
function confirmed(label, id, fields, run, enabled) {
  const panel = el('div', { class: 'confirm', hidden: true, id: `${id}-confirm` });
  const open = el('button', { type: 'button', id, disabled: !enabled, 'aria-controls': `${id}-confirm`, 'aria-expanded': 'false' }, label);
  open.addEventListener('click', () => {
    panel.hidden = false;
    open.setAttribute('aria-expanded', 'true');
    (panel.querySelector('input, textarea') || panel.querySelector('button')).focus();
  });
  const go = el('button', { type: 'button', id: `${id}-go` }, `Confirm: ${label.toLowerCase()}`);
  const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
  cancel.addEventListener('click', () => { panel.hidden = true; open.setAttribute('aria-expanded', 'false'); open.focus(); });
  go.addEventListener('click', async () => {
    go.disabled = true;
    try { await run(panel); } finally { go.disabled = false; }
  });
  panel.append(...fields, el('p', {}, go, ' ', cancel));
  return el('div', {}, open, panel);
}

async function job(tenant, jobId) {
  const scoped = (suffix) => {
    if (tenant == null) return suffix;
    return `${suffix}${suffix.includes('?') ? '&' : '?'}tenant=${encodeURIComponent(tenant)}`;
  };
  const path = `/ops/quarantine/${encodeURIComponent(jobId)}${scoped('')}`;
  const r = await api('GET', path);
  if (!r.ok) { view.replaceChildren(el('h2', {}, jobId)); say(problem(r), 'error'); return; }
  const rec = r.json.record;
  const t = rec.triage;
  const operator = can('operator');
  const act = (method, suffix, body, what) => async () => {
    const res = await api(method, `/ops/quarantine/${encodeURIComponent(jobId)}${scoped(suffix)}`, body);
    if (res.ok) {
      // A resolve whose clean-up is not finished says so (unfinished), and is no plain success.
      say(`${what}: ${res.json.outcome || res.json.triageState || 'done'}${res.json.generation ? `, generation ${res.json.generation}` : ''}`
        + `${res.json.detail ? ` (${res.json.detail})` : ''}${res.json.unfinished ? `; not finished: ${res.json.unfinished}` : ''}`,
      res.json.unfinished ? 'error' : 'ok');
      await job(tenant, jobId);
    } else {
      say(`${what} refused: ${problem(res)}`, 'error');
    }
  };
  const reasonField = (id) => [el('label', { for: id }, 'Reason (goes into the audit trail)'), el('input', { id, required: true, size: 50 })];
  const value = (panel, id) => panel.querySelector(`#${id}`).value.trim();
  const notAllowed = operator ? null : el('p', { class: 'muted', id: 'cannot-act' }, `Your token's roles (${(claims().groups || []).join(', ') || 'none'}) cannot act on this job; a dry run is all a viewer may do.`);

  // A replay whose sending instance died leaves the ledger REPLAYING: only a re-issue moves it. A record left REPLAYING
  // over a ledger still QUARANTINED (it died before the ledger's move) replays as usual.
  const ledgerState = r.json.ledgerState;
  const replaying = ledgerState === 'REPLAYING';
  const replayable = replaying || rec.status === 'QUARANTINED' || (rec.status === 'REPLAYING' && ledgerState === 'QUARANTINED');
  const actions = el('div', { class: 'actions' },
    actionCard('Acknowledge', 'Say you have seen it: the review clock stops asking for acknowledgement.',
      confirmed('Acknowledge', 'ack', [], act('POST', '/acknowledge', undefined, 'Acknowledge'), operator && !t.acknowledgedBy && rec.status === 'QUARANTINED')),
    actionCard('Assign', `Assigned to: ${t.assignee || 'nobody'}.`,
      confirmed('Assign', 'assign', [el('label', { for: 'assignee' }, 'Assignee (blank to unassign)'), el('input', { id: 'assignee' }), ...reasonField('assign-reason')],
        (p) => act('POST', '/assign', { assignee: value(p, 'assignee'), reason: value(p, 'assign-reason') }, 'Assign')(), operator)),
    actionCard('Note', 'Leave a note (scrubbed of secrets; audited).',
      confirmed('Add note', 'note', [el('label', { for: 'note-text' }, 'Note'), el('textarea', { id: 'note-text', rows: 3 })],
        (p) => act('POST', '/notes', { text: value(p, 'note-text') }, 'Note')(), operator)),
    actionCard('Replay', replaying
      ? 'A replay of this job has not finished. If it has not reached a worker within the replay settle time (the instance sending it died, say), re-issue it; the service refuses while the replay may still be under way.'
      : 'A dry run says what a replay would do; a replay sends the job back with its next generation.',
      el('div', {},
        el('button', { type: 'button', id: 'dry-run', class: 'secondary', onclick: act('POST', '/replay', { dryRun: true }, 'Dry run') }, 'Dry run'),
        confirmed(replaying ? 'Re-issue replay' : 'Replay', 'replay', reasonField('replay-reason'),
          (p) => act('POST', '/replay', { dryRun: false, reason: value(p, 'replay-reason') }, 'Replay')(),
          operator && replayable))),
    actionCard('Resolve', 'Discard it for good (its dead-letter copies are deleted).',
      confirmed('Resolve', 'resolve', reasonField('resolve-reason'), (p) => act('POST', '/resolve', { reason: value(p, 'resolve-reason') }, 'Resolve')(),
        operator && rec.status === 'QUARANTINED')));

  const d = rec.diagnostics || {};
  view.replaceChildren(
    el('h2', {}, `Job ${jobId} `, badge(r.json.triageState)),
    table(['', ''], [['tenant', rec.tenant ?? '(none)'], ['job type', rec.jobType], ['failure class', rec.failureClass], ['reason', rec.reason],
      ['attempts', String(rec.attempts)], ['generation', String(rec.generation)], ['quarantined', rec.quarantinedAt],
      ['record status', rec.status], ['ledger state', r.json.ledgerState || 'unknown'], ['owner', t.owner + (t.ownerDefaulted ? ' (default: no owner matched)' : '')],
      ['acknowledged', t.acknowledgedBy ? `${t.acknowledgedBy} at ${t.acknowledgedAt}` : 'not yet'], ['assignee', t.assignee || 'nobody'],
      ['escalated', t.escalated.length ? t.escalated.join(', ') : 'no']], 'Summary'),
    ...(notAllowed ? [notAllowed] : []),
    el('h3', {}, 'Actions'), actions,
    el('h3', {}, 'Attempt history'),
    el('ol', { class: 'timeline' }, rec.history.map((a) => el('li', {},
      el('strong', {}, `Attempt ${a.number}`), ` ${a.outcome || ''} ${a.failureClass || ''} `,
      el('span', { class: 'muted' }, `${a.startedAt || ''} → ${a.endedAt || 'running'} on ${a.worker || '?'}`),
      a.message ? el('div', {}, `${a.errorType || ''}: ${a.message}`) : null))),
    el('h3', {}, 'Diagnostics'),
    table(['', ''], [['size (bytes)', String(d.sizeBytes)], ['charset', d.charset || ''], ['transfer encoding', d.transferEncoding || 'none'],
      ['schema version', String(d.schemaVersion ?? '')], ['attachments', String(d.attachmentCount ?? '')]]),
    el('h3', {}, 'Replays'),
    rec.replays.length ? table(['generation', 'at', 'by', 'reason', 'outcome'], rec.replays.map((x) => [String(x.generation), x.at, x.actor, x.reason, x.outcome || 'pending']))
      : el('p', { class: 'muted' }, 'never replayed'),
    el('h3', {}, 'Notes'),
    t.notes.length ? el('ul', {}, t.notes.map((n) => el('li', {}, `${n.at} ${n.by}: ${n.text}`))) : el('p', { class: 'muted' }, 'no notes'),
    el('h3', {}, 'Audit'),
    table(['at', 'who', 'action', 'outcome', 'reason'], r.json.audit.map((a) => [a.at, a.actor, a.action, a.outcome, a.reason || ''])));
}

// ---------------------------------------------------------------------------------------------
// Bulk replay
// ---------------------------------------------------------------------------------------------

function bulk() {
  const form = el('form', { 'aria-label': 'Bulk replay selection' },
    el('label', { for: 'b-tenant' }, 'Tenant'), el('input', { id: 'b-tenant', required: true }),
    el('label', { for: 'b-class' }, 'Failure class'),
    el('select', { id: 'b-class', required: true }, CLASSES.slice(1).map((c) => el('option', { value: c }, c))),
    el('label', { for: 'b-type' }, 'Job type (optional)'), el('input', { id: 'b-type' }),
    el('label', { for: 'b-limit' }, 'At most'), el('input', { id: 'b-limit', type: 'number', min: 1, value: 50 }),
    el('label', { for: 'b-reason' }, 'Reason'), el('input', { id: 'b-reason', size: 50 }),
    el('p', {}, el('button', { type: 'submit' }, 'Dry run')));
  const out = el('div', { 'aria-live': 'polite' });
  // Where in the listing the selection starts: set by "Select the jobs past these", cleared by a new dry run from the form.
  let after;
  const selection = () => ({ tenant: form.querySelector('#b-tenant').value.trim(), failureClass: form.querySelector('#b-class').value,
    jobType: form.querySelector('#b-type').value.trim() || undefined, limit: Number(form.querySelector('#b-limit').value),
    reason: form.querySelector('#b-reason').value.trim(), after });
  const dryRun = async () => {
    const r = await api('POST', '/ops/replays', { ...selection(), dryRun: true });
    if (!r.ok) { say(problem(r), 'error'); return; }
    const would = r.json.jobs.filter((j) => j.outcome === 'WOULD_REPLAY').length;
    const next = r.json.complete === false ? r.json.next : undefined;
    const further = next ? el('button', { type: 'button', class: 'secondary', id: 'bulk-next' }, 'Select the jobs past these') : '';
    if (next) further.addEventListener('click', () => { after = next; dryRun(); });
    const refusal = r.json.refusal ? el('p', { class: 'error' }, `A batch of this selection is refused: ${r.json.refusal}.`) : '';
    out.replaceChildren(el('p', {}, `${r.json.jobs.length} jobs selected, ${would} would replay. The first goes alone (the canary); the rest follow only if it succeeds.`
      + (next ? ' The listing goes on past these.' : '')), refusal, further,
      table(['job', 'would'], r.json.jobs.map((j) => [j.jobId, j.outcome])),
      confirmed('Replay these', 'bulk-go', [], async () => {
        const x = await api('POST', '/ops/replays', { ...selection(), dryRun: false });
        if (!x.ok) { say(problem(x), 'error'); return; }
        // Its own page (which a reload or a colleague can open again) shows how it goes from here.
        location.hash = `#/bulk/${encodeURIComponent(x.json.id)}`;
      }, can('operator') && would > 0 && !r.json.refusal));
  };
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    after = undefined;
    dryRun();
  });
  view.replaceChildren(el('h2', {}, 'Bulk replay'), el('p', {}, 'One tenant and one failure class at a time, canary first.'), form, out);
}

async function bulkBatch(id) {
  const out = el('div', { 'aria-live': 'polite' });
  view.replaceChildren(el('h2', {}, `Bulk replay ${id}`), out);
  follow(id, out); // not awaited: the page is shown, and the loop ends when the batch does or the page changes
}

async function follow(id, out) {
  // Ends when the batch does or its page is left (its element is no longer in the document).
  while (out.isConnected) {
    let wait = 1000;
    try {
      const s = await api('GET', `/ops/replays/${encodeURIComponent(id)}`);
      if (!out.isConnected) return;
      if (!s.ok) {
        out.replaceChildren(el('p', { class: 'error' }, problem(s)));
        if (s.status === 404 || s.status === 403 || s.status === 401) return;
        wait = 5000;
      } else {
        const b = s.json;
        const done = b.outcomes.length + (b.stepsOmitted || 0) + (b.notReplayedOmitted || 0);
        const running = ['CANARY_RUNNING', 'WIDENING'].includes(b.status);
        const lines = [el('p', { id: 'bulk-progress' }, `${b.status}: ${done} of ${b.selected} done. ${b.detail || ''}`),
          el('p', { class: 'muted' }, `by ${b.actor}, tenant ${b.tenant}, ${b.failureClass}; started ${b.startedAt}, last moved ${b.updatedAt}`)];
        const notReplayed = b.outcomes.filter((o) => o.outcome !== 'REPLAYED');
        if (notReplayed.length) lines.push(table(['job', 'outcome'], notReplayed.map((o) => [o.jobId, o.outcome])));
        if (b.status === 'ABANDONED') {
          // The server's word (judged by its clock): nothing has kept this batch's state for minutes, though a running batch
          // writes it at least every 30 s. Still looked at now and then, in case only its writes failed for a while.
          lines.push(el('p', { id: 'bulk-stalled', class: 'error' }, `This batch has not moved since ${b.updatedAt}: the`
            + ' instance running it has most likely died. The jobs it did not reach stay quarantined: a new bulk replay selects them'
            + ' again (not the ones it replayed). A job it left REPLAYING (its step says SENDING) is re-issued from its own page.'));
          wait = 30_000;
        }
        out.replaceChildren(...lines);
        if (!running && b.status !== 'ABANDONED') return;
      }
    } catch (e) {
      if (!out.isConnected) return;
      out.replaceChildren(el('p', { class: 'error' }, `The batch's state could not be read (${e.message}); trying again.`));
      wait = 5000;
    }
    await new Promise((res) => setTimeout(res, wait));
  }
}

// ---------------------------------------------------------------------------------------------
// Routing and signing in
// ---------------------------------------------------------------------------------------------

function signOut(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  if (message) say(message, 'error');
  route();
}

async function route() {
  const signedIn = !!token();
  document.getElementById('sign-in').hidden = signedIn;
  document.getElementById('sign-out').hidden = !signedIn;
  view.hidden = !signedIn;
  if (!signedIn) { document.getElementById('who').textContent = ''; return; }
  const c = claims();
  document.getElementById('who').textContent = `${c.sub || '?'} (${(c.groups || []).join(', ')}; tenants ${[].concat(c.tenants || []).join(', ')})`;
  const [path, query] = (location.hash.slice(1) || '/overview').split('?');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === 'list') await list(query || '');
    else if (parts[0] === 'job' && parts.length === 3) await job(parts[1], parts[2]);
    else if (parts[0] === 'job' && parts.length === 2) await job(null, parts[1]);
    else if (parts[0] === 'bulk' && parts.length === 2) await bulkBatch(parts[1]);
    else if (parts[0] === 'bulk') bulk();
    else await overview();
    document.getElementById('main').focus();
  } catch (e) {
    say(`The console could not load this page: ${e.message}`, 'error');
  }
}

document.getElementById('sign-in-form').addEventListener('submit', (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
  document.getElementById('token').value = '';
  say('Signed in.', 'ok');
  route();
});
document.getElementById('sign-out').addEventListener('click', () => signOut());
window.addEventListener('hashchange', () => { say(''); route(); });
route();
