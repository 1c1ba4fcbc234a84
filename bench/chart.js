'use strict';
// Draws bench/results/chart.svg from the results: one bar pair per figure (agent-exec against its first
// baseline), scaled per row so figures with different units share one picture.

function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function renderChart(results) {
  const rows = results.figures.filter((f) => Object.keys(f.baselines).length > 0);
  const width = 900;
  const rowH = 54;
  const left = 330;
  const barMax = width - left - 120;
  const height = 60 + rows.length * rowH;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="22" font-size="15" font-weight="bold">agent-exec vs baselines (${esc(results.date.slice(0, 10))}${results.quick ? ', quick' : ''})</text>`,
    `<text x="10" y="40" fill="#555">${esc(results.machine)}</text>`,
  ];
  rows.forEach((f, i) => {
    const y = 60 + i * rowH;
    const [baseName, baseValue] = Object.entries(f.baselines)[0];
    const max = Math.max(f.ours, baseValue) || 1;
    const w1 = Math.max(1, (f.ours / max) * barMax);
    const w2 = Math.max(1, (baseValue / max) * barMax);
    parts.push(`<text x="10" y="${y + 14}">${esc(f.name)}</text>`);
    parts.push(`<text x="10" y="${y + 30}" fill="#555">${esc(f.unit)}${f.goal ? `, goal ${esc(f.goal)}` : ''}</text>`);
    parts.push(`<rect x="${left}" y="${y + 2}" width="${w1.toFixed(1)}" height="16" fill="#2b7bb9"/>`);
    parts.push(`<text x="${left + w1 + 6}" y="${y + 15}">agent-exec ${f.ours.toFixed(f.ours < 10 ? 3 : 1)}</text>`);
    parts.push(`<rect x="${left}" y="${y + 22}" width="${w2.toFixed(1)}" height="16" fill="#bbbbbb"/>`);
    parts.push(`<text x="${left + w2 + 6}" y="${y + 35}">${esc(baseName)} ${baseValue.toFixed(baseValue < 10 ? 3 : 1)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

module.exports = { renderChart };
