/* global document */
// A horizontal bar chart in inline SVG, drawn from the report's rows: no library, no inline
// styles (colours come from console.css through classes).

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}, text) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/**
 * @param {{ label: string, value: number, display: string }[]} bars
 * @param {string} title what the chart shows, for screen readers
 */
export function barChart(bars, title) {
  const width = 720;
  const labelWidth = 220;
  const valueWidth = 110;
  const barHeight = 22;
  const gap = 8;
  const top = 8;
  const height = top * 2 + Math.max(1, bars.length) * (barHeight + gap);
  const max = Math.max(0, ...bars.map((b) => b.value));
  const room = width - labelWidth - valueWidth;

  const root = svg('svg', { viewBox: `0 0 ${width} ${height}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title', preserveAspectRatio: 'xMinYMin meet' });
  root.append(svg('title', { id: 'chart-title' }, title));
  if (bars.length === 0) {
    root.append(svg('text', { x: 8, y: top + barHeight / 2 + 5, class: 'chart-empty' }, 'No sales in this period.'));
    return root;
  }
  bars.forEach((bar, i) => {
    const y = top + i * (barHeight + gap);
    const w = max > 0 ? Math.max(1, Math.round((bar.value / max) * room)) : 1;
    const label = bar.label.length > 30 ? `${bar.label.slice(0, 29)}…` : bar.label;
    const g = svg('g', { class: 'chart-row' });
    g.append(svg('text', { x: labelWidth - 8, y: y + barHeight / 2 + 5, 'text-anchor': 'end', class: 'chart-label' }, label));
    const rect = svg('rect', { x: labelWidth, y, width: w, height: barHeight, rx: 3, class: 'chart-bar' });
    rect.append(svg('title', {}, `${bar.label}: ${bar.display}`));
    g.append(rect);
    g.append(svg('text', { x: labelWidth + w + 6, y: y + barHeight / 2 + 5, class: 'chart-value' }, bar.display));
    root.append(g);
  });
  return root;
}
