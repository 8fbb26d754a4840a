// SVG pictures read back as XML for tests (fast-xml-parser): the text must be well-formed, and
// tests then count the elements they expect (Graphviz's nodes and clusters, a timeline's lanes
// and bars, a chart's bars) instead of comparing bytes.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { Test } from 'tap';

/** One element: its tag, its attributes, its text and its children, in document order. */
export interface XmlElement {
  readonly tag: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly text: string;
  readonly children: readonly XmlElement[];
}

type Ordered = Record<string, unknown> & { ':@'?: Record<string, string> };

function build(tag: string, node: Ordered): XmlElement {
  const items = (node[tag] as Ordered[] | undefined) ?? [];
  const children: XmlElement[] = [];
  let text = '';
  for (const item of items) {
    const key = Object.keys(item).find((k) => k !== ':@')!;
    if (key === '#text') text += String(item[key]);
    else children.push(build(key, item));
  }
  const attributes: Record<string, string> = {};
  for (const [k, v] of Object.entries(node[':@'] ?? {})) attributes[k.replace(/^@_/, '')] = String(v);
  return { tag, attributes, text, children };
}

/** Parses an SVG document (failing the test with the parser's message when it is not well-formed) and returns its <svg> element. */
export function parseSvg(t: Test, svg: string): XmlElement {
  const valid = XMLValidator.validate(svg);
  t.equal(valid, true, valid === true ? 'well-formed XML' : `well-formed XML: ${JSON.stringify(valid.err)}`);
  const parser = new XMLParser({ ignoreAttributes: false, preserveOrder: true, trimValues: false, parseTagValue: false, parseAttributeValue: false });
  const top = (parser.parse(svg) as Ordered[]).find((n) => 'svg' in n);
  if (!top) throw new Error('parseSvg: the document has no <svg> element');
  return build('svg', top);
}

/** Every element below `root` (and `root` itself) that satisfies `test`, in document order. */
export function findAll(root: XmlElement, test: (e: XmlElement) => boolean): XmlElement[] {
  const found: XmlElement[] = [];
  const walk = (e: XmlElement): void => {
    if (test(e)) found.push(e);
    e.children.forEach(walk);
  };
  walk(root);
  return found;
}

/** Does the element's class attribute hold this class? */
export function hasClass(e: XmlElement, name: string): boolean {
  return (e.attributes.class ?? '').split(/\s+/).includes(name);
}

/** The element's text and that of everything inside it. */
export function textOf(e: XmlElement): string {
  return e.text + e.children.map(textOf).join('');
}
