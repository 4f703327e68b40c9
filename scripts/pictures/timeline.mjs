// A timeline: events on a time axis, with the phases between the deadlines shaded.
import { document, element, palette, text } from "./svg.mjs";

/**
 * @param spec - `{ title, subtitle? (a line or lines), phases: [{ fromMs, toMs, label }], events: [{ atMs, label }] }`
 */
export function timeline({ title, subtitle, phases, events }) {
  const width = 760;
  const height = 150 + events.length * 22;
  const area = { x: 40, width: width - 80, y: 76 };
  const end = Math.max(...events.map((e) => e.atMs), ...phases.map((p) => p.toMs)) * 1.05;
  const x = (ms) => area.x + (ms / end) * area.width;
  const axisY = height - 40;
  const bands = phases.map((phase, i) =>
    element(
      "g",
      {},
      element("rect", {
        x: x(phase.fromMs),
        y: area.y,
        width: x(phase.toMs) - x(phase.fromMs),
        height: axisY - area.y,
        fill: palette[i % palette.length],
        "fill-opacity": 0.12,
      }),
      text((x(phase.fromMs) + x(phase.toMs)) / 2, area.y + 14, phase.label, {
        anchor: "middle",
        size: 11,
        fill: "#333",
      }),
    ),
  );
  const marks = events.map((event, i) => {
    const y = area.y + 36 + i * 22;
    const right = x(event.atMs) > area.x + area.width * 0.6;
    return element(
      "g",
      {},
      element("line", {
        x1: x(event.atMs),
        x2: x(event.atMs),
        y1: y,
        y2: axisY,
        stroke: "#888",
        "stroke-dasharray": "2 3",
      }),
      element("circle", { cx: x(event.atMs), cy: y, r: 4, fill: "#222" }),
      text(x(event.atMs) + (right ? -8 : 8), y + 4, `${event.label} (${event.atMs} ms)`, {
        anchor: right ? "end" : "start",
        size: 11,
      }),
    );
  });
  const ticks = [];
  const step = end > 2000 ? 500 : 100;
  for (let ms = 0; ms <= end; ms += step) {
    ticks.push(element("line", { x1: x(ms), x2: x(ms), y1: axisY, y2: axisY + 5, stroke: "#555" }));
    if (ms % (step * 2) === 0)
      ticks.push(text(x(ms), axisY + 18, `${ms}`, { anchor: "middle", size: 10, fill: "#555" }));
  }
  return document(
    width,
    height,
    title,
    text(area.x, 22, title, { size: 15, weight: "bold" }),
    ...[subtitle ?? []].flat().map((line, i) => text(area.x, 40 + i * 14, line, { size: 11, fill: "#555" })),
    ...bands,
    element("line", { x1: area.x, x2: area.x + area.width, y1: axisY, y2: axisY, stroke: "#555" }),
    ...ticks,
    text(area.x + area.width, axisY + 32, "ms since the guard began", {
      anchor: "end",
      size: 11,
      fill: "#555",
    }),
    ...marks,
  );
}
