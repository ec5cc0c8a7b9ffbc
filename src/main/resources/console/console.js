// The Sparkgate console: reads the admin API of the listener that served it (same origin) every 2 s.
// Every value from the API is shown with textContent, never parsed as HTML.
'use strict';

const TOKEN_KEY = 'sparkgate-admin-token';
const REFRESH_MS = 2000;
let policyLoadedAt = 0;

function $(id) { return document.getElementById(id); }

function headers(json) {
  const h = { 'Accept': 'application/json' };
  if (json) h['Content-Type'] = 'application/json';
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) h['Authorization'] = 'Bearer ' + token;
  return h;
}

class NeedsToken extends Error {}

// A GET without a body, a POST with one; method overrides (DELETE, without a body).
async function api(path, body, method) {
  const init = body === undefined
    ? { method: method || 'GET', headers: headers(false), cache: 'no-store' }
    : { method: method || 'POST', headers: headers(true), body: JSON.stringify(body), cache: 'no-store' };
  const r = await fetch(path, init);
  if (r.status === 401) throw new NeedsToken();
  const data = await r.json().catch(() => ({ error: 'HTTP ' + r.status }));
  if (!r.ok && !data.outcome) throw new Error(data.error || ('HTTP ' + r.status));
  return data;
}

function showLogin(shown) {
  $('login').hidden = !shown;
  $('main').hidden = shown;
  $('forget-token').hidden = shown || !sessionStorage.getItem(TOKEN_KEY);
}

function status(text, error) {
  const s = $('status');
  s.textContent = text;
  s.className = error ? 'error' : 'muted';
}

// The outcome of the operator's last action: kept until the next one (refreshes do not overwrite it).
function actionStatus(text, error) {
  const s = $('action');
  s.textContent = text;
  s.className = error ? 'error' : 'muted';
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

function duration(seconds) {
  if (seconds < 60) return seconds + ' s';
  if (seconds < 3600) return Math.floor(seconds / 60) + ' min ' + (seconds % 60) + ' s';
  return Math.floor(seconds / 3600) + ' h ' + Math.floor((seconds % 3600) / 60) + ' min';
}

// Rows are kept by key and only their cells rewritten, so a button stays the same element across refreshes.
function render(tableId, items, key, cells, columns) {
  const body = $(tableId).tBodies[0];
  const seen = new Set();
  for (const item of items) {
    const k = key(item);
    seen.add(k);
    let row = body.querySelector('tr[data-key="' + CSS.escape(k) + '"]');
    if (!row) {
      row = document.createElement('tr');
      row.dataset.key = k;
      body.appendChild(row);
    }
    const values = cells(item, row);
    values.forEach((v, i) => {
      let td = row.children[i];
      if (!td) { td = el('td'); row.appendChild(td); }
      if (v instanceof Node) {
        if (td.firstChild !== v) { td.replaceChildren(v); }
      } else if (td.textContent !== String(v)) {
        td.textContent = String(v);
      }
    });
  }
  for (const row of Array.from(body.querySelectorAll('tr'))) {
    if (row.dataset.key === undefined ? items.length > 0 : !seen.has(row.dataset.key)) row.remove();
  }
  if (items.length === 0 && !body.querySelector('tr.empty-row')) {
    const row = el('tr', undefined, 'empty-row');
    const td = el('td', 'none', 'empty');
    td.colSpan = columns;
    row.appendChild(td);
    body.appendChild(row);
  }
}

function actionButton(row, label, onClick) {
  if (!row.actionButton) {
    const b = el('button', label, 'danger');
    b.type = 'button';
    b.addEventListener('click', () => onClick(b));
    row.actionButton = b;
  }
  return row.actionButton;
}

function summaryText(summary) {
  if (!summary) return '';
  const parts = [];
  if (summary.sql) parts.push(summary.sql.join(' ; '));
  if (summary.kinds) parts.push('[' + summary.kinds.join(', ') + ']');
  if (summary.tables_read) parts.push('reads ' + summary.tables_read.join(', '));
  if (summary.tables_written) parts.push('writes ' + summary.tables_written.join(', '));
  return parts.join(' ');
}

async function act(button, path, what) {
  button.disabled = true;
  try {
    const r = await api(path, {});
    actionStatus(what + ': ' + r.outcome, r.error !== undefined);
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); return; }
    actionStatus(what + ' failed: ' + e.message, true);
    button.disabled = false;
  }
}

const ANONYMOUS = {
  fallback: "Anonymous fallback is on: callers without credentials are served as user 'anonymous'.",
  only: "Anonymous only: no credentials are checked; every caller is served as user 'anonymous'.",
};

function showAccess(access) {
  const notice = $('anonymous-notice');
  const text = ANONYMOUS[access.anonymous];
  notice.hidden = !text;
  if (text && notice.textContent !== text) notice.textContent = text;
  $('revocations-kept').textContent = '(kept in ' + access.kept_in +
    (access.denied_jti_file_ids ? '; ' + access.denied_jti_file_ids + ' ids in the denied jti file' : '') + ')';
  render('revocations', access.revoked, r => r.kind + '|' + r.name, (r, row) => [
    r.kind,
    el('span', r.name, 'mono'),
    r.reason,
    r.until ? new Date(r.until).toLocaleString() : 'until restored',
    r.operator,
    new Date(r.at).toLocaleString(),
    (() => {
      const b = actionButton(row, 'Restore', btn => restore(btn, r.kind, r.name));
      b.dataset.name = r.name;
      b.className = 'restore';
      return b;
    })(),
  ], 7);
}

// The name as one path segment: a SPIFFE ID's '/' is sent as %2F.
function revokePath(kind, name) {
  return '/api/' + (kind === 'token' || kind === 'tokens' ? 'tokens/' : 'principals/') +
    encodeURIComponent(name) + '/revoke';
}

async function restore(button, kind, name) {
  button.disabled = true;
  try {
    await api(revokePath(kind, name), undefined, 'DELETE');
    actionStatus('restored ' + kind + ' ' + name);
    refresh();
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); return; }
    actionStatus('restore ' + kind + ' ' + name + ' failed: ' + e.message, true);
    button.disabled = false;
  }
}

async function revoke() {
  const kind = $('rv-kind').value;
  const name = $('rv-name').value.trim();
  const until = $('rv-until').value.trim();
  if (!name) { actionStatus('revoke: give a name', true); return; }
  const body = { reason: $('rv-reason').value.trim() };
  if (until) body.until = until;
  const button = $('rv-revoke');
  button.disabled = true;
  try {
    const r = await api(revokePath(kind, name), body);
    actionStatus('revoked ' + r.revoked.kind + ' ' + r.revoked.name + ' (kept in ' + r.kept_in + ')');
    for (const id of ['rv-name', 'rv-reason', 'rv-until']) $(id).value = '';
    refresh();
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); return; }
    actionStatus('revoke ' + name + ' failed: ' + e.message, true);
  } finally {
    button.disabled = false;
  }
}

// Every replica's engines (a warm one has no key yet); only the owner replica can stop one.
function showEngines(engines) {
  $('engines-section').hidden = engines.length === 0;
  $('engines-count').textContent = '(' + engines.length + ')';
  render('engines', engines, e => e.pool + '|' + e.key + '|' + e.address, (e, row) => [
    e.pool,
    el('span', e.key || '(warm)', 'mono'),
    el('span', e.owner, 'mono'),
    el('span', e.address, 'mono'),
    el('span', e.state, 'state-' + e.state),
    duration(e.age_seconds),
    e.sessions,
    e.last_use ? new Date(e.last_use).toLocaleTimeString() : '',
    e.key ? (() => {
      const b = actionButton(row, 'Stop', btn =>
        act(btn, '/api/engines/' + encodeURIComponent(e.pool) + '/' + encodeURIComponent(e.key) + '/stop',
          'stop engine ' + e.key));
      b.dataset.engine = e.key;
      b.className = 'danger stop-engine';
      return b;
    })() : '',
  ], 9);
}

async function refresh() {
  try {
    const [ops, sessions, refusals, backends, access, engines] = await Promise.all([
      api('/api/operations'), api('/api/sessions'), api('/api/refusals'), api('/api/backends'),
      api('/api/revocations'), api('/api/engines')]);
    showLogin(false);
    showAccess(access);
    showEngines(engines.engines);
    $('operations-count').textContent = '(' + ops.operations.length + ')';
    render('operations', ops.operations, o => o.operation_id + '|' + o.rpc + '|' + o.started, (o, row) => [
      el('span', o.operation_id + (o.reattached ? ' (reattached)' : ''), 'mono'),
      o.principal,
      el('span', o.session_id, 'mono'),
      o.pool + ' / ' + o.backend,
      duration(o.running_seconds),
      el('span', summaryText(o.plan_summary), 'mono'),
      (() => {
        const b = actionButton(row, 'Interrupt', btn =>
          act(btn, '/api/operations/' + encodeURIComponent(o.operation_id) + '/interrupt', 'interrupt ' + o.operation_id));
        b.dataset.operation = o.operation_id;
        b.className = 'danger interrupt';
        return b;
      })(),
    ], 7);
    $('sessions-count').textContent = '(' + sessions.sessions.length + ')';
    render('sessions', sessions.sessions, s => s.session_id + '|' + s.principal, (s, row) => [
      el('span', s.session_id, 'mono'),
      s.principal,
      s.pool + ' / ' + s.backend,
      duration(s.age_seconds),
      s.running_operations,
      (() => {
        const b = actionButton(row, 'Release', btn =>
          act(btn, '/api/sessions/' + encodeURIComponent(s.session_id) + '/release', 'release ' + s.session_id));
        b.dataset.session = s.session_id;
        b.className = 'danger release';
        return b;
      })(),
    ], 6);
    render('refusals', refusals.refusals, r => r.time + '|' + r.rpc + '|' + r.reason + '|' + r.principal, r => [
      new Date(r.time).toLocaleTimeString(), r.kind, r.reason, r.principal, r.rpc,
    ], 5);
    const rows = [];
    for (const p of backends.pools) for (const b of p.backends) rows.push({ pool: p.pool, address: b.address, state: b.state });
    render('backends', rows, b => b.pool + '|' + b.address, b => [
      b.pool, el('span', b.address, 'mono'), el('span', b.state, 'state-' + b.state),
    ], 3);
    if (Date.now() - policyLoadedAt > 10000) await loadPolicy();
    status('updated ' + new Date().toLocaleTimeString());
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); status('admin token needed', true); return; }
    status('cannot reach the admin API: ' + e.message, true);
  }
}

async function loadPolicy() {
  const policy = await api('/api/policy');
  policyLoadedAt = Date.now();
  const box = $('policy');
  const select = $('pg-pool');
  const chosen = select.value;
  const grantsPool = $('gr-pool');
  const grantsChosen = grantsPool.value;
  box.replaceChildren();
  select.replaceChildren();
  grantsPool.replaceChildren();
  if (!policy.enabled) box.appendChild(el('p', 'No policy section: requests are not checked.', 'error'));
  for (const p of policy.pools) {
    const div = el('div', undefined, 'policy-pool');
    div.appendChild(el('strong', p.pool));
    div.appendChild(el('div', p.file, 'mono'));
    div.appendChild(el('div', p.rules.length + ' rules, default ' + p.default_effect +
      '; reloads ' + p.reloads + ', last ' + new Date(p.last_reload).toLocaleString()));
    if (p.last_error) div.appendChild(el('div', 'not reloaded: ' + p.last_error, 'error'));
    div.appendChild(el('div', p.rules.join(', '), 'muted'));
    box.appendChild(div);
    const option = el('option', p.pool);
    option.value = p.pool;
    select.appendChild(option);
    grantsPool.appendChild(option.cloneNode(true));
  }
  if (chosen) select.value = chosen;
  if (grantsChosen) grantsPool.value = grantsChosen;
  $('pg-run').disabled = !policy.enabled;
  $('gr-who').disabled = !policy.enabled;
  $('gr-what').disabled = !policy.enabled;
}

async function explain() {
  const out = $('pg-decision');
  try {
    const r = await api('/api/playground', { pool: $('pg-pool').value, sql: $('pg-sql').value });
    if (r.error) { out.replaceChildren(el('span', r.error, 'error')); $('pg-facts').textContent = ''; return; }
    out.replaceChildren(
      el('span', r.decision, 'decision-' + r.decision), el('span', " by rule '" + r.rule + "'"),
      el('div', r.message || ''));
    $('pg-facts').textContent = r.lines.join('\n');
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); return; }
    out.replaceChildren(el('span', e.message, 'error'));
  }
}

// A table of grants, or a line saying what the default does when there are none.
function grantsTable(rows, none, header, cells) {
  if (rows.length === 0) return el('p', none, 'muted');
  const table = el('table');
  const head = table.createTHead().insertRow();
  for (const h of header) head.appendChild(el('th', h));
  const body = table.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const c of cells(r)) { const td = el('td'); td.append(c); tr.appendChild(td); }
  }
  return table;
}

function uncovered(r) {
  return r.default === 'deny' ? 'No grant covers it: default deny, no one may reach it.'
    : 'No grant covers it: default allow, everyone may reach it.';
}

async function grantsQuery(path, params, out, show) {
  const q = new URLSearchParams({ pool: $('gr-pool').value });
  for (const [k, v] of Object.entries(params)) if (v.trim()) q.set(k, v.trim());
  try {
    const r = await api(path + '?' + q.toString());
    out.replaceChildren(...show(r));
  } catch (e) {
    if (e instanceof NeedsToken) { showLogin(true); return; }
    out.replaceChildren(el('span', e.message, 'error'));
  }
}

function who() {
  const coverage = g => [g.grant, g.to + (g.principal ? ' (for principal ' + g.principal + ' only)' : ''),
    g.privileges.join(', '), el('span', g.pattern, 'mono')];
  const header = ['Grant', 'To', 'Privileges', 'By pattern'];
  grantsQuery('/api/grants/who', { table: $('gr-table').value, path: $('gr-path').value }, $('gr-who-out'), r => {
    const parts = [];
    if (r.table !== undefined) {
      parts.push(el('h3', r.table, 'mono'), grantsTable(r.grants, uncovered(r), header, coverage));
    }
    if (r.path !== undefined) {
      parts.push(el('h3', r.path, 'mono'), grantsTable(r.path_grants, uncovered(r), header, coverage));
    }
    return parts;
  });
}

function what() {
  grantsQuery('/api/grants/what',
    { principal: $('gr-principal').value, groups: $('gr-groups').value, tenant: $('gr-tenant').value },
    $('gr-what-out'), r => [grantsTable(r.grants,
      'Holds no grant: ' + (r.default === 'deny' ? 'default deny, no table or path.' : 'default allow, only what no grant covers.'),
      ['Grant', 'Privileges', 'Tables and paths'],
      g => [g.grant, g.privileges.join(', '), el('span', g.tables.concat(g.paths).join(', '), 'mono')])]);
}

function saveToken() {
  const input = $('token');
  const token = input.value.trim();
  input.value = '';
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  policyLoadedAt = 0;
  refresh();
}

document.addEventListener('DOMContentLoaded', () => {
  $('token-save').addEventListener('click', saveToken);
  $('token').addEventListener('keydown', e => { if (e.key === 'Enter') saveToken(); });
  $('forget-token').addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); showLogin(true); });
  $('pg-run').addEventListener('click', explain);
  $('gr-who').addEventListener('click', who);
  $('gr-what').addEventListener('click', what);
  $('rv-revoke').addEventListener('click', revoke);
  refresh();
  setInterval(refresh, REFRESH_MS);
});
