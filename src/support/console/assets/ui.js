/* global document, Node */
// DOM helpers: every element is built with createElement and textContent (never innerHTML), so
// nothing the API returns can become markup; no inline styles or scripts (the CSP forbids them).

/**
 * h('a', { href: '#/x', class: 'c', onclick: fn }, 'text', child) → an element.
 * Attributes whose value is false, null or undefined are left out; `true` sets an empty one.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === false || value === null || value === undefined) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value);
    else if (name === 'class') el.className = value;
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `el`. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** Text in Arabic: right to left, marked as Arabic for screen readers. */
export const arabic = (text) => (text ? h('span', { dir: 'rtl', lang: 'ar', class: 'arabic' }, text) : h('span', { class: 'muted' }, '—'));

/** A card or vendor name as the provider gives it: English, then Arabic right to left. */
export function names(name) {
  if (!name) return h('span', { class: 'muted' }, 'unknown');
  return h('span', { class: 'names' }, h('span', { lang: 'en' }, name.en || '—'), ' ', arabic(name.ar));
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
export const when = (iso) => (iso ? h('time', { datetime: iso, title: iso }, dateTime.format(new Date(iso))) : h('span', { class: 'muted' }, '—'));

/** "3 minutes ago" for a past ISO time. */
export function ago(iso) {
  const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}

const STATUS_LABELS = {
  queued: 'Queued',
  reserving: 'Reserving',
  reserved: 'Reserved',
  confirming: 'Confirming',
  fulfilled: 'Fulfilled',
  failed: 'Failed',
  needs_attention: 'Needs attention',
};
export const STATUSES = Object.keys(STATUS_LABELS);
export const statusLabel = (status) => STATUS_LABELS[status] ?? status;
export const statusBadge = (status) => h('span', { class: `badge status-${status}` }, statusLabel(status));

/** An error box for a view: the readable message and, for engineers, the request id. */
export function errorBox(error) {
  return h(
    'div',
    { class: 'error-box', role: 'alert' },
    h('p', {}, error?.message ?? String(error)),
    error?.requestId ? h('p', { class: 'muted small' }, 'Reference for engineers: ', h('code', {}, error.requestId)) : null,
  );
}

/** Copies `text`; the Clipboard API where allowed (https or localhost), else a selected field. */
export async function copyText(text) {
  if (navigator.clipboard && globalThis.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // fall through to the older way
    }
  }
  const field = h('textarea', { class: 'offscreen', readonly: true, 'aria-hidden': 'true' });
  field.value = text;
  document.body.append(field);
  field.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  field.remove();
  return ok;
}

/** A value with a Copy button, for references the provider's support will ask for. */
export function copyable(label, value) {
  if (value === null || value === undefined || value === '') return h('span', { class: 'muted' }, 'none');
  const text = String(value);
  const button = h('button', { type: 'button', class: 'copy small-button', 'aria-label': `Copy ${label}` }, 'Copy');
  const feedback = h('span', { class: 'copy-feedback', role: 'status', 'aria-live': 'polite' });
  button.addEventListener('click', async () => {
    const ok = await copyText(text);
    feedback.textContent = ok ? 'Copied' : 'Select and copy it by hand';
    setTimeout(() => (feedback.textContent = ''), 2000);
  });
  return h('span', { class: 'copyable' }, h('code', { class: 'reference' }, text), ' ', button, feedback);
}

/**
 * A table: `columns` = [{ label, cell: (row) => node|string, class? }]. `caption` is announced.
 */
export function table(caption, columns, rows, options = {}) {
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: options.class ?? '' },
      h('caption', { class: options.captionHidden ? 'visually-hidden' : '' }, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class ?? '' }, c.label)))),
      h(
        'tbody',
        {},
        rows.map((row) => h('tr', options.rowAttrs ? options.rowAttrs(row) : {}, columns.map((c) => h('td', { class: c.class ?? '' }, c.cell(row))))),
      ),
      options.footer ? h('tfoot', {}, options.footer) : null,
    ),
  );
}

const dialog = () => document.getElementById('dialog');

/**
 * A modal confirmation (native <dialog>: focus stays inside, Escape cancels). `onConfirm` gets
 * the form; what it resolves is returned; if it throws, the message is shown and the dialog
 * stays open. Resolves null when cancelled.
 */
export function confirmDialog({ title, body, confirmLabel = 'Confirm', danger = false, onConfirm }) {
  const dlg = dialog();
  const form = document.getElementById('dialog-form');
  const confirm = document.getElementById('dialog-confirm');
  const cancel = document.getElementById('dialog-cancel');
  const errorEl = document.getElementById('dialog-error');
  const opener = document.activeElement;
  replace(document.getElementById('dialog-title'), title);
  replace(document.getElementById('dialog-body'), body);
  confirm.textContent = confirmLabel;
  confirm.className = danger ? 'danger' : '';
  confirm.disabled = false;
  errorEl.hidden = true;
  errorEl.textContent = '';

  return new Promise((resolve) => {
    let settled = false;
    const finish = (value) => {
      if (settled) return;
      settled = true;
      form.removeEventListener('submit', onSubmit);
      cancel.removeEventListener('click', onCancel);
      dlg.removeEventListener('close', onClose);
      if (dlg.open) dlg.close();
      replace(document.getElementById('dialog-body'));
      if (opener && typeof opener.focus === 'function' && opener.isConnected) opener.focus();
      resolve(value);
    };
    const onCancel = () => finish(null);
    const onClose = () => finish(null);
    const onSubmit = async (event) => {
      event.preventDefault();
      if (!form.reportValidity()) return;
      confirm.disabled = true;
      errorEl.hidden = true;
      try {
        finish(await onConfirm(form));
      } catch (error) {
        errorEl.textContent = error?.message ?? String(error);
        errorEl.hidden = false;
        confirm.disabled = false;
      }
    };
    form.addEventListener('submit', onSubmit);
    cancel.addEventListener('click', onCancel);
    dlg.addEventListener('close', onClose);
    dlg.showModal();
    const first = dlg.querySelector('#dialog-body input, #dialog-body textarea, #dialog-body select');
    (first ?? cancel).focus();
  });
}

/** A labelled form field. */
export function field(label, control, hint) {
  const id = control.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  control.id = id;
  const hintEl = hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}
