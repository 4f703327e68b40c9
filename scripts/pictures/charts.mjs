// Charts drawn from figures: grouped bars over a value axis.
import { document, element, palette, text } from "./svg.mjs";

/** A "nice" axis maximum and step for values up to `max`: 1, 2 or 5 × 10ⁿ per step, about five steps. */
function niceScale(max) {
  if (!(max > 0)) return { top: 1, step: 0.2 };
  const rough = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough);
  return { top: Math.ceil(max / step) * step, step };
}

/** A number as an axis label: no more digits than the step needs. */
function tick(value, step) {
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return value.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** The horizontal grid, value labels and the axis title of a chart whose plot area is `area`. */
function valueAxis(area, top, step, label) {
  const parts = [];
  for (let value = 0; value <= top + step / 2; value += step) {
    const y = area.y + area.height - (value / top) * area.height;
    parts.push(element("line", { x1: area.x, x2: area.x + area.width, y1: y, y2: y, stroke: "#ddd" }));
    parts.push(text(area.x - 6, y + 4, tick(value, step), { anchor: "end", size: 11, fill: "#555" }));
  }
  parts.push(text(16, area.y + area.height / 2, label, { anchor: "middle", size: 12, rotate: -90 }));
  return parts;
}

/** A legend row under the title. */
function legend(x, y, labels) {
  let offset = x;
  return labels.map((label, index) => {
    const part = element(
      "g",
      {},
      element("rect", { x: offset, y: y - 9, width: 10, height: 10, fill: palette[index % palette.length] }),
      text(offset + 14, y, label, { size: 11 }),
    );
    offset += 24 + label.length * 6.5;
    return part;
  });
}

/**
 * Grouped bars: one group per category, one bar per series, each labelled with its value.
 *
 * @param spec - `{ title, subtitle?, unit, categories: string[], series: [{ label, values: number[] }],
 *   reference?: { value, label } }` (a dashed horizontal line, e.g. a target)
 */
export function barChart({ title, subtitle, unit, categories, series, reference }) {
  const legendWidth = series.reduce((sum, s) => sum + 24 + s.label.length * 6.5, 0);
  const rightMargin = reference ? 24 + reference.label.length * 6.5 : 20;
  const width = Math.max(
    560,
    title.length * 9 + 90,
    (subtitle ?? "").length * 6.2 + 90,
    legendWidth + 90,
    84 + rightMargin + categories.length * (series.length * 34 + 40),
  );
  const height = 340;
  const area = { x: 64, y: 70, width: width - 64 - rightMargin, height: 200 };
  const values = series
    .flatMap((s) => s.values)
    .concat(reference ? [reference.value] : [])
    .filter((value) => value !== undefined);
  const { top, step } = niceScale(Math.max(...values));
  const y = (value) => area.y + area.height - (value / top) * area.height;
  const groupWidth = area.width / categories.length;
  const barWidth = Math.min(30, (groupWidth - 20) / series.length);
  const bars = categories.flatMap((category, c) => {
    const left = area.x + c * groupWidth + (groupWidth - barWidth * series.length) / 2;
    return [
      ...series.map((s, i) => {
        const value = s.values[c];
        if (value === undefined) return "";
        const x = left + i * barWidth;
        return element(
          "g",
          {},
          element("rect", {
            x,
            y: y(value),
            width: barWidth - 2,
            height: area.y + area.height - y(value),
            fill: palette[i % palette.length],
          }),
          text(x + barWidth / 2 - 1, y(value) - 3, tick(value, step / 10), {
            anchor: "middle",
            size: 9,
            fill: "#333",
          }),
        );
      }),
      text(area.x + c * groupWidth + groupWidth / 2, area.y + area.height + 16, category, {
        anchor: "middle",
        size: 11,
      }),
    ];
  });
  const line = reference && [
    element("line", {
      x1: area.x,
      x2: area.x + area.width,
      y1: y(reference.value),
      y2: y(reference.value),
      stroke: "#d62728",
      "stroke-dasharray": "5 4",
    }),
    text(area.x + area.width + 6, y(reference.value) + 4, reference.label, {
      anchor: "start",
      size: 11,
      fill: "#d62728",
    }),
  ];
  return document(
    width,
    height,
    title,
    text(area.x, 22, title, { size: 15, weight: "bold" }),
    subtitle && text(area.x, 40, subtitle, { size: 11, fill: "#555" }),
    ...legend(
      area.x,
      58,
      series.map((s) => s.label),
    ),
    ...valueAxis(area, top, step, unit),
    ...bars,
    ...(line ?? []),
  );
}
