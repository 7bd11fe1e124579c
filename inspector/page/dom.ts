/** The page's two DOM helpers: an element of the page by id, and a new element with its class and text. */

/** The page's element `#id`. @throws Error when the page has no such element (a page and script out of step). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const node = document.getElementById(id);
  if (node === null) throw new Error(`inspector page: #${id} is missing`);
  return node as T;
}

/** A new `<tag>` with its class and text (written with `textContent`: never parsed as HTML). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className?: string,
  text?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A `<button type="button">` with its class and text. */
export function button(className: string, text: string, id?: string): HTMLButtonElement {
  const node = el('button', className, text);
  node.type = 'button';
  if (id !== undefined) node.id = id;
  return node;
}
