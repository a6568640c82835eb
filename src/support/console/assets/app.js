/* global document, window, location, history */
// The support console: sign in with a support key, find orders, look at one (timeline,
// references for the provider, audited reveal, retry/resolve), the needs-attention queue and
// the sales report. A hash router (#/search, #/order/<id>, #/attention, #/reports); the key is
// never put in a URL.

import { api, hasScope, query, readiness, session, whenUnauthorized } from './api.js';
import { barChart } from './chart.js';
import { ago, arabic, confirmDialog, copyable, errorBox, field, h, names, replace, STATUSES, statusBadge, statusLabel, table, when } from './ui.js';

const main = document.getElementById('main');
/** The signed-in key's identity from GET /v1/me: { id, name, prefix, scopes }. */
let me = null;
/** Bumped on every navigation: a view whose data arrives after the person moved on draws nothing. */
let renderToken = 0;
let firstRender = true;

// ---------------------------------------------------------------- chrome

function updateChrome() {
  const signedIn = Boolean(me);
  document.getElementById('nav').hidden = !signedIn;
  document.getElementById('identity').hidden = !signedIn;
  if (signedIn) {
    replace(document.getElementById('identity-name'), 'Signed in as ', h('strong', {}, me.name), h('span', { class: 'muted small scopes' }, ` (${me.scopes.join(', ')})`));
  }
  const view = (location.hash.match(/^#\/(\w+)/) ?? [])[1] ?? 'search';
  for (const link of document.querySelectorAll('#nav a')) {
    const active = link.dataset.nav === view || (view === 'order' && link.dataset.nav === 'search');
    if (active) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** Replaces the view: a heading (focused after navigation, so screen readers announce it) and content. */
function show(title, ...content) {
  document.title = `${title} · Support console`;
  const heading = h('h1', { tabindex: '-1' }, title);
  replace(main, heading, ...content);
  if (!firstRender) heading.focus();
  firstRender = false;
}

const isCurrent = (token) => token === renderToken;

async function refreshStatus() {
  const catalogPill = document.getElementById('status-catalog');
  const busyPill = document.getElementById('status-busy');
  const pill = (el, text, level, title) => {
    el.textContent = text;
    el.className = `pill ${level}`;
    if (title) el.title = title;
    else el.removeAttribute('title');
  };
  try {
    const ready = await readiness();
    const catalog = ready.checks?.catalog;
    if (!catalog) pill(catalogPill, 'Catalog: not reported', 'unknown');
    else {
      const syncedAt = catalog.details?.syncedAt;
      if (catalog.ok) pill(catalogPill, `Catalog synced ${ago(syncedAt)}`, 'ok', syncedAt);
      else if (catalog.error === 'never_synced') pill(catalogPill, 'Catalog never synced', 'warn');
      else if (catalog.error === 'stale') pill(catalogPill, `Catalog stale: last synced ${syncedAt ? ago(syncedAt) : 'never'}`, 'warn', syncedAt);
      else pill(catalogPill, 'Catalog: status unknown', 'unknown');
    }
    const busy = ready.checks?.provider_busy_mode;
    if (!busy) pill(busyPill, 'Provider: not reported', 'unknown');
    else if (busy.ok) pill(busyPill, 'Provider: normal', 'ok');
    else if (busy.error === 'busy') {
      const d = busy.details ?? {};
      const until = d.until ? ` until ${new Date(d.until).toLocaleTimeString()}` : '';
      pill(busyPill, `Provider busy mode ON${until}`, 'warn', d.reason ? `Reason: ${d.reason}` : undefined);
    } else pill(busyPill, 'Provider: status unknown', 'unknown');
    if (ready.status !== 'ready') pill(catalogPill, `${catalogPill.textContent} · gateway not ready`, 'bad');
  } catch {
    pill(catalogPill, 'Status unavailable', 'unknown');
    pill(busyPill, 'Provider: unknown', 'unknown');
  }
  // Queue health needs a signed-in key (support:read).
  const queuePill = document.getElementById('status-queues');
  if (!me) {
    queuePill.hidden = true;
    return;
  }
  try {
    const { data } = await api('/v1/support/queues');
    const orders = data.find((q) => q.name === 'order-pipeline');
    const failed = data.reduce((n, q) => n + q.failed, 0);
    const text = `Orders in flight: ${orders ? orders.waiting + orders.active + orders.delayed : '?'} · failed jobs: ${failed}`;
    pill(queuePill, text, failed > 0 ? 'warn' : 'ok', data.map((q) => `${q.name}: ${q.waiting} waiting, ${q.active} active, ${q.delayed} delayed, ${q.failed} failed`).join('\n'));
    queuePill.hidden = false;
  } catch {
    queuePill.hidden = true;
  }
}

// ---------------------------------------------------------------- sign in

function renderSignIn(message) {
  me = null;
  updateChrome();
  const input = h('input', { type: 'password', name: 'key', autocomplete: 'off', spellcheck: 'false', required: true, minlength: 10, placeholder: 'gwk_…' });
  const errorArea = h('div', {});
  const button = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'card narrow', novalidate: false },
    field('Support API key', input, 'Paste the key you were given. It is kept in this browser tab only, and forgotten when you sign out or close the tab.'),
    errorArea,
    h('div', { class: 'actions' }, button),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) return;
    button.disabled = true;
    replace(errorArea);
    try {
      const identity = await api('/v1/me', { key });
      if (!hasScope(identity, 'support:read')) {
        replace(errorArea, errorBox(new Error(`The key "${identity.name}" cannot use the support console: it lacks the support:read scope.`)));
        return;
      }
      session.set(key);
      me = identity;
      void refreshStatus();
      input.value = '';
      if (!/^#\/(search|order|attention|reports)/.test(location.hash)) history.replaceState(null, '', '#/search');
      await route();
    } catch (error) {
      replace(errorArea, errorBox(error));
    } finally {
      button.disabled = false;
    }
  });
  show('Sign in', message ? h('p', { class: 'notice', role: 'status' }, message) : null, form);
  input.focus();
}

function signOut(message) {
  session.clear();
  me = null;
  renderToken++;
  history.replaceState(null, '', location.pathname);
  renderSignIn(message);
}

// ---------------------------------------------------------------- order lists

function orderTable(caption, orders, extra = []) {
  return table(
    caption,
    [
      { label: 'Transaction no.', cell: (o) => h('a', { href: `#/order/${o.id}`, class: 'order-link' }, String(o.transactionNumber)) },
      { label: 'Status', cell: (o) => statusBadge(o.status) },
      ...extra,
      { label: 'Transaction id', cell: (o) => (o.transactionId ? h('code', {}, o.transactionId) : h('span', { class: 'muted' }, 'none')) },
      { label: 'Reference', cell: (o) => o.reference ?? '—' },
      { label: 'Card', cell: (o) => o.cardId },
      { label: 'Qty', cell: (o) => String(o.quantity), class: 'num' },
      { label: 'Total', cell: (o) => o.totalAmount, class: 'num' },
      { label: 'Storefront', cell: (o) => o.storefront ?? '—' },
      { label: 'Created', cell: (o) => when(o.createdAt) },
    ],
    orders,
    {
      class: 'orders',
      rowAttrs: (o) => ({
        class: 'clickable',
        onclick: (event) => {
          if (event.target.closest('a, button')) return;
          location.hash = `#/order/${o.id}`;
        },
      }),
    },
  );
}

async function renderSearch(token, params) {
  const q = params.get('q') ?? '';
  const status = params.get('status') ?? '';
  const qInput = h('input', { type: 'search', name: 'q', value: q, maxlength: 200, autocomplete: 'off', spellcheck: 'false' });
  const statusSelect = h('select', { name: 'status' }, h('option', { value: '' }, 'Any status'), STATUSES.map((s) => h('option', { value: s, selected: s === status }, statusLabel(s))));
  const form = h(
    'form',
    { class: 'card search-form', role: 'search' },
    field('Transaction number, transaction id, reference or order id', qInput, 'Exact match. Leave empty to list the newest orders.'),
    field('Status', statusSelect),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Search')),
  );
  const results = h('section', { 'aria-live': 'polite', 'aria-busy': 'true' });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = `#/search${query({ q: qInput.value.trim(), status: statusSelect.value })}`;
    if (location.hash === next) void route();
    else location.hash = next;
  });
  show('Find an order', form, results);

  const orders = [];
  const load = async (cursor) => {
    const page = await api(`/v1/support/orders${query({ q: q || undefined, status: status || undefined, cursor, limit: 50 })}`);
    if (!isCurrent(token)) return;
    orders.push(...page.data);
    results.setAttribute('aria-busy', 'false');
    if (orders.length === 0) {
      replace(results, h('p', { class: 'empty' }, q ? `No order matches "${q}" exactly.` : 'No orders.'));
      return;
    }
    const more = page.nextCursor
      ? h('button', { type: 'button', class: 'secondary', onclick: () => load(page.nextCursor).catch((e) => results.append(errorBox(e))) }, 'Load more')
      : null;
    replace(results, h('p', { class: 'muted' }, `${orders.length}${page.nextCursor ? '+' : ''} order${orders.length === 1 ? '' : 's'}`), orderTable('Orders found', orders), more);
  };
  try {
    await load(undefined);
  } catch (error) {
    if (isCurrent(token)) replace(results, errorBox(error));
  }
}

async function renderAttention(token) {
  show('Needs attention', h('p', { class: 'muted' }, 'Loading…'));
  try {
    const page = await api(`/v1/support/orders${query({ status: 'needs_attention', limit: 200 })}`);
    if (!isCurrent(token)) return;
    const orders = page.data;
    show(
      `Needs attention (${orders.length}${page.nextCursor ? '+' : ''})`,
      h('p', { class: 'muted' }, 'Orders whose outcome at the provider is not known. Open one to see what happened and to retry or resolve it.'),
      orders.length === 0
        ? h('p', { class: 'empty' }, 'Nothing needs attention right now.')
        : orderTable('Orders in needs_attention', orders, [{ label: 'What is unknown', cell: (o) => o.statusDetail ?? '—' }, { label: 'Since', cell: (o) => when(o.updatedAt) }]),
    );
  } catch (error) {
    if (isCurrent(token)) show('Needs attention', errorBox(error));
  }
}

// ---------------------------------------------------------------- order page

const KIND_LABELS = { status: 'Status', provider_call: 'Provider call', callback: 'Callback', webhook: 'Webhook', support: 'Support', note: 'Note' };

function compactJson(value) {
  if (value === null || value === undefined) return '';
  const text = JSON.stringify(value);
  return text === '{}' ? '' : text;
}

function timelineWhat(e) {
  if (e.kind === 'status') return h('span', {}, e.fromStatus ? statusLabel(e.fromStatus) : 'new', ' → ', h('strong', {}, e.toStatus ? statusLabel(e.toStatus) : '?'));
  if (e.endpoint) return h('code', {}, e.endpoint);
  return '';
}

function timelineResult(e) {
  if (e.ok === null && e.upstreamCode === null) return '';
  const parts = [];
  if (e.ok !== null) parts.push(h('span', { class: e.ok ? 'ok-text' : 'bad-text' }, e.ok ? 'OK' : 'Failed'));
  if (e.upstreamCode !== null) parts.push(' ', h('span', { class: 'muted' }, 'code '), h('code', {}, String(e.upstreamCode)));
  return h('span', {}, parts);
}

function definitionList(rows) {
  return h('dl', { class: 'facts' }, rows.filter(Boolean).map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]));
}

function section(title, ...content) {
  return h('section', { class: 'card', 'aria-label': title }, h('h2', {}, title), ...content);
}

/** Lines "code" or "code, serial number" (a tab works too) → cards for resolve. */
function parseCards(text) {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const at = line.search(/[,\t]/);
      return at === -1 ? { code: line, number: '' } : { code: line.slice(0, at).trim(), number: line.slice(at + 1).trim() };
    });
}

async function renderOrder(token, id) {
  show('Order', h('p', { class: 'muted' }, 'Loading…'));
  let d;
  try {
    d = await api(`/v1/support/orders/${encodeURIComponent(id)}`);
  } catch (error) {
    if (isCurrent(token)) show('Order', errorBox(error), h('p', {}, h('a', { href: '#/search' }, 'Back to search')));
    return;
  }
  if (!isCurrent(token)) return;
  const o = d.order;
  const canReveal = hasScope(me, 'support:reveal');
  const canWrite = hasScope(me, 'support:write');
  const canAudit = canReveal; // GET /v1/support/audit: support:reveal or admin

  // References the provider's support asks for.
  const references = section(
    'References for the provider',
    definitionList([
      ['Transaction number', copyable('transaction number', o.transactionNumber)],
      ['Transaction id', copyable('transaction id', o.transactionId)],
      d.previousTransactionNumbers.length > 0 ? ['Previous transaction numbers', h('span', { class: 'stack' }, d.previousTransactionNumbers.map((n) => copyable('previous transaction number', n)))] : null,
      ['Payment reference', copyable('payment reference', `gw-${o.id}`)],
      ['Order id', copyable('order id', o.id)],
      ['Storefront reference', copyable('storefront reference', o.reference)],
    ]),
  );

  const summary = section(
    'Order',
    definitionList([
      ['Status', h('span', {}, statusBadge(o.status), o.statusDetail ? h('span', { class: 'status-detail' }, ` ${o.statusDetail}`) : null)],
      o.failure ? ['Failure', h('span', {}, h('code', {}, o.failure.code), ` ${o.failure.message}`, o.failure.upstreamCode !== null ? ` (provider code ${o.failure.upstreamCode})` : '')] : null,
      ['Vendor', d.vendor ? names(d.vendor.name) : h('span', { class: 'muted' }, 'unknown')],
      ['Card', h('span', {}, names(d.denominationName), ' ', h('span', { class: 'muted' }, `(card id ${o.cardId})`))],
      ['Quantity', String(o.quantity)],
      ['Unit price', o.unitPrice],
      ['Total amount', h('strong', {}, o.totalAmount)],
      ['Cards stored', String(d.cardsStored)],
      ['Storefront', o.storefront ?? '—'],
      ['Created', when(o.createdAt)],
      ['Updated', when(o.updatedAt)],
      ['Fulfilled', when(o.fulfilledAt)],
    ]),
  );

  // Codes: shown in place after the confirmation, only in the page (never stored); gone when
  // the person leaves the page or presses Hide.
  const codesArea = h('div', { class: 'codes', 'aria-live': 'polite' });
  const auditArea = h('div', {});
  const actionsError = h('div', {});

  const revealButton = h('button', { type: 'button', disabled: !canReveal || d.cardsStored === 0 }, 'Reveal codes');
  revealButton.addEventListener('click', async () => {
    const reason = h('textarea', { name: 'reason', required: true, minlength: 3, maxlength: 500, rows: 3 });
    const revealed = await confirmDialog({
      title: 'Reveal card codes',
      body: [
        h('p', {}, `Card codes are worth money. Reveal them only to help the customer of transaction ${o.transactionNumber}.`),
        h('p', {}, 'Your name, the time, where you are and your reason are written to the audit log.'),
        field('Reason', reason, 'For example: customer lost the email, ticket 1234.'),
      ],
      confirmLabel: 'Reveal codes',
      danger: true,
      onConfirm: () => api(`/v1/support/orders/${o.id}/reveal`, { method: 'POST', body: { reason: reason.value.trim() } }),
    });
    if (!revealed || !isCurrent(token)) return;
    const hide = h('button', { type: 'button', class: 'secondary' }, 'Hide codes');
    hide.addEventListener('click', () => {
      replace(codesArea);
      revealButton.focus();
    });
    replace(
      codesArea,
      table(
        `Card codes (${revealed.cards.length})`,
        [
          { label: '#', cell: (c) => String(c.position), class: 'num' },
          { label: 'Code', cell: (c) => copyable('code', c.code) },
          { label: 'Serial number', cell: (c) => c.number || '—' },
        ],
        revealed.cards.map((c, i) => ({ ...c, position: i + 1 })),
        { class: 'codes-table' },
      ),
      h('p', { class: 'muted small' }, 'These codes are not kept anywhere by this page; they disappear when you leave it.'),
      hide,
    );
    hide.focus();
    if (canAudit) void loadAudit();
  });

  const actionButtons = [revealButton];
  const notes = [];
  if (!canReveal) notes.push('Revealing codes needs a key with support:reveal.');
  else if (d.cardsStored === 0) notes.push('No codes are stored for this order.');

  if (o.status === 'needs_attention') {
    if (!canWrite) notes.push('Retrying or resolving needs a key with support:write.');
    const retry = h('button', { type: 'button', disabled: !canWrite }, 'Retry…');
    const resolve = h('button', { type: 'button', class: 'secondary', disabled: !canWrite }, 'Resolve…');
    retry.addEventListener('click', async () => {
      const note = h('textarea', { name: 'note', required: true, minlength: 3, maxlength: 1000, rows: 3 });
      const body = [];
      let confirmBox = null;
      if (o.transactionId) {
        body.push(h('p', {}, 'The gateway will confirm again with transaction id ', h('code', {}, o.transactionId), '. A confirm can never reserve more cards.'));
      } else {
        body.push(
          h('p', {}, `This order has no transaction id: the provider may hold a reservation under transaction number ${o.transactionNumber}. Retry only after the provider confirmed it holds none; the order then gets a new transaction number.`),
        );
        confirmBox = h('input', { type: 'checkbox', name: 'noReservation', id: 'no-reservation', required: true });
        body.push(h('div', { class: 'check' }, confirmBox, h('label', { for: 'no-reservation' }, `The provider confirmed that transaction number ${o.transactionNumber} holds no reservation.`)));
      }
      body.push(field('Note for the timeline', note, 'What you checked and with whom.'));
      const done = await confirmDialog({
        title: `Retry order ${o.transactionNumber}`,
        body,
        confirmLabel: 'Retry order',
        onConfirm: () =>
          api(`/v1/support/orders/${o.id}/retry`, {
            method: 'POST',
            body: { note: note.value.trim(), ...(confirmBox ? { noReservationConfirmed: confirmBox.checked } : {}) },
          }),
      });
      if (done && isCurrent(token)) void route();
    });
    resolve.addEventListener('click', async () => {
      const failed = h('input', { type: 'radio', name: 'outcome', value: 'failed', id: 'outcome-failed', checked: true });
      const fulfilled = h('input', { type: 'radio', name: 'outcome', value: 'fulfilled', id: 'outcome-fulfilled' });
      const note = h('textarea', { name: 'note', required: true, minlength: 3, maxlength: 1000, rows: 3 });
      const codes = h('textarea', { name: 'codes', rows: 4, spellcheck: 'false', disabled: true });
      const codesField = field('Codes recovered at the provider', codes, 'One card per line: the code, then optionally a comma and its serial number.');
      const sync = () => {
        codes.disabled = !fulfilled.checked;
        codesField.hidden = !fulfilled.checked;
      };
      failed.addEventListener('change', sync);
      fulfilled.addEventListener('change', sync);
      sync();
      const done = await confirmDialog({
        title: `Resolve order ${o.transactionNumber}`,
        body: [
          h(
            'fieldset',
            {},
            h('legend', {}, 'Outcome'),
            h('div', { class: 'check' }, failed, h('label', { for: 'outcome-failed' }, 'Failed: the provider holds no paid order for it')),
            h('div', { class: 'check' }, fulfilled, h('label', { for: 'outcome-fulfilled' }, 'Fulfilled: I recovered the codes at the provider')),
          ),
          codesField,
          field('Note for the timeline', note, 'What the provider told you.'),
        ],
        confirmLabel: 'Resolve order',
        danger: true,
        onConfirm: () => {
          const outcome = fulfilled.checked ? 'fulfilled' : 'failed';
          const cards = outcome === 'fulfilled' ? parseCards(codes.value) : [];
          return api(`/v1/support/orders/${o.id}/resolve`, {
            method: 'POST',
            body: { outcome, note: note.value.trim(), ...(cards.length > 0 ? { cards } : {}) },
          });
        },
      });
      if (done && isCurrent(token)) void route();
    });
    actionButtons.push(retry, resolve);
  }

  const actions = section('Actions', h('div', { class: 'actions' }, actionButtons), notes.map((n) => h('p', { class: 'muted small' }, n)), actionsError, codesArea);

  const timeline = section(
    'Timeline',
    d.timeline.length === 0
      ? h('p', { class: 'empty' }, 'No events.')
      : table(
          'Every step, provider call, callback and webhook, oldest first',
          [
            { label: 'Time', cell: (e) => when(e.at) },
            { label: 'Event', cell: (e) => KIND_LABELS[e.kind] ?? e.kind },
            { label: 'What', cell: timelineWhat },
            { label: 'Result', cell: timelineResult },
            { label: 'Duration', cell: (e) => (e.durationMs === null ? '' : `${e.durationMs} ms`), class: 'num' },
            { label: 'Details', cell: (e) => h('code', { class: 'detail' }, compactJson(e.detail)) },
          ],
          d.timeline,
          { class: 'timeline', captionHidden: true },
        ),
  );

  const callbacks = section(
    'Callbacks to the storefront',
    d.callbacks.length === 0
      ? h('p', { class: 'empty' }, 'None.')
      : table(
          'Callbacks',
          [
            { label: 'Event', cell: (c) => c.event },
            { label: 'Status', cell: (c) => c.status },
            { label: 'Attempts', cell: (c) => String(c.attempts), class: 'num' },
            { label: 'Last HTTP status', cell: (c) => (c.lastStatus === null ? '—' : String(c.lastStatus)), class: 'num' },
            { label: 'Delivered', cell: (c) => when(c.deliveredAt) },
          ],
          d.callbacks,
          { captionHidden: true },
        ),
  );

  const webhooks = section(
    'Webhooks from the provider',
    d.webhooks.length === 0
      ? h('p', { class: 'empty' }, 'None.')
      : table(
          'Webhooks',
          [
            { label: 'Type', cell: (w) => w.type },
            { label: 'Status', cell: (w) => w.status },
            { label: 'Received', cell: (w) => when(w.receivedAt) },
            { label: 'Id', cell: (w) => h('code', {}, w.id) },
          ],
          d.webhooks,
          { captionHidden: true },
        ),
  );

  async function loadAudit() {
    try {
      const { data } = await api(`/v1/support/audit${query({ orderId: o.id, limit: 100 })}`);
      if (!isCurrent(token)) return;
      replace(
        auditArea,
        data.length === 0
          ? h('p', { class: 'empty' }, 'No audit entries for this order.')
          : table(
              'Audit entries, newest first',
              [
                { label: 'Time', cell: (a) => when(a.at) },
                { label: 'Who', cell: (a) => a.actor },
                { label: 'Action', cell: (a) => h('span', { class: `audit-action action-${a.action}` }, a.action.replace(/_/g, ' ')) },
                { label: 'From', cell: (a) => a.sourceIp ?? '—' },
                { label: 'Details', cell: (a) => h('code', { class: 'detail' }, compactJson(a.detail)) },
              ],
              data,
              { class: 'audit', captionHidden: true },
            ),
      );
    } catch (error) {
      if (isCurrent(token)) replace(auditArea, errorBox(error));
    }
  }

  const audit = canAudit ? section('Audit log', auditArea) : null;
  show(
    `Order ${o.transactionNumber}`,
    h('p', {}, h('a', { href: '#/search' }, '← Back to search')),
    h('div', { class: 'grid' }, summary, references),
    actions,
    timeline,
    h('div', { class: 'grid' }, callbacks, webhooks),
    audit,
  );
  if (canAudit) await loadAudit();
}

// ---------------------------------------------------------------- sales report

const pad = (n) => String(n).padStart(2, '0');
const dateValue = (d) => `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
/** The start of a local calendar day (`days` later), as ISO 8601. */
function dayStart(value, days = 0) {
  const [y, m, d] = value.split('-').map(Number);
  return new Date(y, m - 1, d + days).toISOString();
}

function renderReports(token, params) {
  const today = new Date();
  const weekAgo = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 6);
  const from = h('input', { type: 'date', name: 'from', required: true, value: params.get('from') ?? dateValue(weekAgo) });
  const to = h('input', { type: 'date', name: 'to', required: true, value: params.get('to') ?? dateValue(today) });
  const groupBy = h(
    'select',
    { name: 'groupBy' },
    [
      ['day', 'Day'],
      ['vendor', 'Vendor'],
      ['denomination', 'Card (denomination)'],
    ].map(([v, label]) => h('option', { value: v, selected: (params.get('groupBy') ?? 'day') === v }, label)),
  );
  const download = h('button', { type: 'button', class: 'secondary' }, 'Download CSV');
  const status = h('p', { class: 'muted small', role: 'status', 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card report-form' },
    field('From', from),
    field('To (inclusive)', to),
    field('Group by', groupBy),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Show report'), download),
    status,
  );
  const results = h('div', { 'aria-live': 'polite' });
  const range = () => ({ from: dayStart(from.value), to: dayStart(to.value, 1), groupBy: groupBy.value });

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const next = `#/reports${query({ from: from.value, to: to.value, groupBy: groupBy.value })}`;
    if (location.hash === next) void load();
    else location.hash = next;
  });

  download.addEventListener('click', async () => {
    if (!form.reportValidity()) return;
    download.disabled = true;
    status.textContent = 'Preparing the CSV…';
    try {
      const res = await api(`/v1/support/reports/sales${query(range())}`, { accept: 'text/csv', raw: true });
      const blob = await res.blob();
      const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? `sales-${groupBy.value}-${from.value}-${to.value}.csv`;
      const url = URL.createObjectURL(blob);
      const link = h('a', { href: url, download: name, class: 'offscreen' }, name);
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
      status.textContent = `Downloaded ${name}.`;
    } catch (error) {
      status.textContent = '';
      replace(results, errorBox(error));
    } finally {
      download.disabled = false;
    }
  });

  async function load() {
    replace(results, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const report = await api(`/v1/support/reports/sales${query(range())}`);
      if (!isCurrent(token)) return;
      const byDay = report.groupBy === 'day';
      const keyLabel = byDay ? 'Day' : report.groupBy === 'vendor' ? 'Vendor id' : 'Card id';
      const columns = [{ label: keyLabel, cell: (r) => r.key }];
      if (!byDay) columns.push({ label: 'Name', cell: (r) => r.nameEn || '—' }, { label: 'Arabic name', cell: (r) => arabic(r.nameAr) });
      columns.push({ label: 'Orders', cell: (r) => String(r.orders), class: 'num' }, { label: 'Cards', cell: (r) => String(r.quantity), class: 'num' }, { label: 'Amount', cell: (r) => r.amount, class: 'num' });
      const footer = h(
        'tr',
        { class: 'total' },
        h('th', { scope: 'row', colspan: byDay ? 1 : 3 }, 'Total'),
        h('td', { class: 'num' }, String(report.total.orders)),
        h('td', { class: 'num' }, String(report.total.quantity)),
        h('td', { class: 'num' }, report.total.amount),
      );
      const bars = report.rows.map((r) => ({ label: byDay ? r.key : r.nameEn || r.key, value: Number(r.amount), display: r.amount }));
      replace(
        results,
        section(
          'Amount sold',
          h('p', { class: 'muted small' }, `Fulfilled orders from ${from.value} to ${to.value}${byDay ? `, days in ${report.timeZone}` : ''}.`),
          h('figure', { class: 'chart-wrap' }, barChart(bars, `Amount sold by ${report.groupBy}`)),
        ),
        section('Figures', report.rows.length === 0 ? h('p', { class: 'empty' }, 'No sales in this period.') : table(`Sales by ${report.groupBy}`, columns, report.rows, { class: 'report', footer })),
      );
    } catch (error) {
      if (isCurrent(token)) replace(results, errorBox(error));
    }
  }

  show('Sales report', form, results);
  void load();
}

// ---------------------------------------------------------------- router

async function route() {
  const token = ++renderToken;
  if (!session.key) {
    renderSignIn();
    return;
  }
  if (!me) {
    try {
      me = await api('/v1/me');
    } catch (error) {
      if (!isCurrent(token)) return;
      if (error.status === 401) return; // whenUnauthorized already sent the person to sign in
      show('Support console', errorBox(error), h('button', { type: 'button', onclick: () => void route() }, 'Try again'));
      return;
    }
    if (!isCurrent(token)) return;
  }
  updateChrome();
  const [path, search = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(search);
  const parts = path.split('/').filter(Boolean);
  switch (parts[0]) {
    case 'order':
      return renderOrder(token, parts[1] ?? '');
    case 'attention':
      return renderAttention(token);
    case 'reports':
      return renderReports(token, params);
    default:
      return renderSearch(token, params);
  }
}

whenUnauthorized(() => signOut('Your key is no longer accepted. Sign in again.'));
document.getElementById('sign-out').addEventListener('click', () => signOut('You are signed out.'));
window.addEventListener('hashchange', () => void route());
// Leaving the page (or putting it in the back/forward cache) drops revealed codes from the DOM.
window.addEventListener('pagehide', () => replace(main));
window.addEventListener('pageshow', (event) => {
  if (event.persisted) void route();
});

void refreshStatus();
setInterval(() => void refreshStatus(), 60_000);
void route();
