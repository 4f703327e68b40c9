// The few SVG elements the pictures are made of, as strings. Every text is escaped.

/** Escapes text for SVG (XML) content and attribute values. */
export function escapeXml(text) {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Attributes from an object, `undefined` values left out; numbers rounded to 0.1. */
function attributes(attrs) {
  return Object.entries(attrs)
    .filter(([, value]) => value !== undefined)
    .map(
      ([name, value]) =>
        ` ${name}="${escapeXml(typeof value === "number" ? Math.round(value * 10) / 10 : value)}"`,
    )
    .join("");
}

/** One element: `<name attrs>children</name>`, or self-closing without children. */
export function element(name, attrs = {}, ...children) {
  const inner = children
    .flat()
    .filter((child) => child !== undefined && child !== "")
    .join("");
  return inner === "" ? `<${name}${attributes(attrs)}/>` : `<${name}${attributes(attrs)}>${inner}</${name}>`;
}

/** A text element; `anchor` is `start`, `middle` or `end`. */
export function text(x, y, content, { anchor = "start", size = 12, weight, fill = "#222", rotate } = {}) {
  return element(
    "text",
    {
      x,
      y,
      "text-anchor": anchor,
      "font-size": size,
      "font-weight": weight,
      fill,
      transform: rotate === undefined ? undefined : `rotate(${rotate} ${x} ${y})`,
    },
    escapeXml(content),
  );
}

/** The whole document: a white background, a sans-serif font, and the given parts. */
export function document(width, height, title, ...parts) {
  return `${element(
    "svg",
    {
      xmlns: "http://www.w3.org/2000/svg",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      "font-family": "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif",
      role: "img",
      "aria-label": title,
    },
    element("title", {}, escapeXml(title)),
    element("rect", { width, height, fill: "#fff" }),
    ...parts,
  )}\n`;
}

/** Colours of the series, in order, distinguishable in colour and in grey. */
export const palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
