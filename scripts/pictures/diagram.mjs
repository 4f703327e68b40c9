// A box-and-arrow diagram laid out on a grid: nodes at (column, row), edges clipped to the boxes' borders.
import { document, element, text } from "./svg.mjs";

const cell = { width: 290, height: 92 };
const box = { width: 190, height: 56 };
const kinds = {
  package: { fill: "#e8f1fb", stroke: "#1f77b4" },
  service: { fill: "#fff4e5", stroke: "#ff7f0e" },
  data: { fill: "#eef7ee", stroke: "#2ca02c" },
  outside: { fill: "#f4f4f4", stroke: "#888" },
};

/** The point where the segment from a box's centre towards (x, y) leaves the box. */
function border(center, toward) {
  const dx = toward.x - center.x;
  const dy = toward.y - center.y;
  const scale = Math.min(
    dx === 0 ? Infinity : box.width / 2 / Math.abs(dx),
    dy === 0 ? Infinity : box.height / 2 / Math.abs(dy),
  );
  return { x: center.x + dx * scale, y: center.y + dy * scale };
}

/**
 * @param spec - `{ title, nodes: { id: { column, row, label, detail?, kind } }, edges: [{ from, to, label? }],
 *   legend?: boolean }`; `kind` is `package`, `service`, `data` or `outside`
 */
export function diagram({ title, nodes, edges }) {
  const columns = Math.max(...Object.values(nodes).map((n) => n.column)) + 1;
  const rows = Math.max(...Object.values(nodes).map((n) => n.row)) + 1;
  const width = columns * cell.width + 40;
  const height = rows * cell.height + 90;
  const center = ({ column, row }) => ({
    x: 20 + column * cell.width + cell.width / 2,
    y: 60 + row * cell.height + cell.height / 2,
  });
  const boxes = Object.values(nodes).map((node) => {
    const c = center(node);
    const style = kinds[node.kind];
    return element(
      "g",
      {},
      element("rect", {
        x: c.x - box.width / 2,
        y: c.y - box.height / 2,
        width: box.width,
        height: box.height,
        rx: 6,
        fill: style.fill,
        stroke: style.stroke,
        "stroke-width": 1.5,
      }),
      text(c.x, c.y - (node.detail ? 4 : -4), node.label, { anchor: "middle", size: 13, weight: "bold" }),
      node.detail && text(c.x, c.y + 14, node.detail, { anchor: "middle", size: 10, fill: "#444" }),
    );
  });
  const arrows = edges.map(({ from, to, label }) => {
    const a = center(nodes[from]);
    const b = center(nodes[to]);
    const start = border(a, b);
    const end = border(b, a);
    return element(
      "g",
      {},
      element("line", {
        x1: start.x,
        y1: start.y,
        x2: end.x,
        y2: end.y,
        stroke: "#444",
        "stroke-width": 1.3,
        "marker-end": "url(#arrow)",
      }),
      label &&
        (Math.abs(end.y - start.y) < 1
          ? text((start.x + end.x) / 2, start.y - 6, label, { anchor: "middle", size: 10, fill: "#333" })
          : text((start.x + end.x) / 2 + 6, (start.y + end.y) / 2 - 4, label, { size: 10, fill: "#333" })),
    );
  });
  const marker = element(
    "defs",
    {},
    element(
      "marker",
      {
        id: "arrow",
        viewBox: "0 0 10 10",
        refX: 10,
        refY: 5,
        markerWidth: 7,
        markerHeight: 7,
        orient: "auto-start-reverse",
      },
      element("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#444" }),
    ),
  );
  const legend = Object.entries(kinds).map(([kind, style], i) =>
    element(
      "g",
      {},
      element("rect", {
        x: 20 + i * 150,
        y: height - 26,
        width: 14,
        height: 14,
        rx: 3,
        fill: style.fill,
        stroke: style.stroke,
      }),
      text(
        40 + i * 150,
        height - 15,
        { package: "@x package", service: "service", data: "stored data", outside: "your code / outside" }[
          kind
        ],
        { size: 11 },
      ),
    ),
  );
  return document(
    width,
    height,
    title,
    marker,
    text(20, 30, title, { size: 16, weight: "bold" }),
    ...arrows,
    ...boxes,
    ...legend,
  );
}
