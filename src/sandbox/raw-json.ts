/**
 * A minimal scanner over the raw text of a JSON object body. It exists because JSON.parse loses
 * the literal a client sent: `0.30000000000000004` and `0.3` are different money amounts on the
 * wire but a test of "what did the gateway send" must see the exact text. Node 20's JSON.parse
 * has no access to source text, so the sandbox finds top-level members itself.
 */

export interface RawMember {
  /** The member's value exactly as written (for a string, including its quotes). */
  raw: string;
  start: number;
  end: number;
}

const WS = new Set([' ', '\t', '\n', '\r']);

function skipWs(text: string, i: number): number {
  while (i < text.length && WS.has(text[i]!)) i++;
  return i;
}

function skipString(text: string, i: number): number {
  // text[i] is the opening quote; returns the index after the closing quote.
  i++;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else i++;
  }
  throw new SyntaxError('unterminated string');
}

function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return skipString(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    while (i < text.length) {
      const d = text[i]!;
      if (d === '"') {
        i = skipString(text, i);
        continue;
      }
      if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    throw new SyntaxError('unterminated container');
  }
  // number, true, false, null: runs until a delimiter.
  const start = i;
  while (i < text.length && !WS.has(text[i]!) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
  if (i === start) throw new SyntaxError('value expected');
  return i;
}

/**
 * Every top-level member of a JSON object text in order, duplicates included. Returns an empty
 * list for text that is not an object; throws SyntaxError on a malformed object.
 */
export function scanTopLevelEntries(text: string): Array<RawMember & { key: string }> {
  const members: Array<RawMember & { key: string }> = [];
  let i = skipWs(text, 0);
  if (text[i] !== '{') return members;
  i = skipWs(text, i + 1);
  if (text[i] === '}') return members;
  while (i < text.length) {
    if (text[i] !== '"') throw new SyntaxError('key expected');
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') throw new SyntaxError('colon expected');
    const start = skipWs(text, i + 1);
    const end = skipValue(text, start);
    members.push({ key, raw: text.slice(start, end), start, end });
    i = skipWs(text, end);
    if (text[i] === ',') i = skipWs(text, i + 1);
    else if (text[i] === '}') return members;
    else throw new SyntaxError('comma or brace expected');
  }
  throw new SyntaxError('unterminated object');
}

/** Top-level members by key; the last occurrence wins, as in JSON.parse. */
export function scanTopLevelMembers(text: string): Map<string, RawMember> {
  return new Map(scanTopLevelEntries(text).map(({ key, ...member }) => [key, member]));
}

/** The raw literal of one top-level member, or undefined (absent, or text not a JSON object). */
export function rawMember(text: string, key: string): string | undefined {
  try {
    return scanTopLevelMembers(text).get(key)?.raw;
  } catch {
    return undefined;
  }
}

/**
 * The body text with the values of the given top-level keys replaced by "[redacted]", every other
 * byte untouched. Text that cannot be scanned is replaced whole: a call log must never keep a
 * password because the body was malformed.
 */
export function redactRawMembers(text: string, keys: readonly string[]): string {
  let entries: Array<RawMember & { key: string }>;
  try {
    entries = scanTopLevelEntries(text);
  } catch {
    return keys.some((k) => text.includes(k)) ? '[unparseable body redacted]' : text;
  }
  // Every occurrence, not only the one JSON.parse keeps: a duplicated key must not leak either.
  const spans = entries.filter((e) => keys.includes(e.key)).sort((a, b) => b.start - a.start);
  let out = text;
  for (const span of spans) out = `${out.slice(0, span.start)}"[redacted]"${out.slice(span.end)}`;
  return out;
}
