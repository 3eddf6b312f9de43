// Tiny DOM helpers. Text always goes in through textContent: node names and
// keys come from the network and may look like HTML.

export const $ = (id) => document.getElementById(id);

/** el('td', {className: 'num'}, 'text' | Node | [children]) */
export function el(tag, props, content) {
  const node = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null) continue;
      if (k === 'className') node.className = v;
      else if (k === 'dataset') Object.assign(node.dataset, v);
      else if (k in node && k !== 'list') node[k] = v;
      else node.setAttribute(k, v);
    }
  }
  append(node, content);
  return node;
}

function append(node, content) {
  if (content === undefined || content === null) return;
  if (Array.isArray(content)) {
    for (const c of content) append(node, c);
  } else if (content instanceof Node) {
    node.appendChild(content);
  } else {
    node.appendChild(document.createTextNode(String(content)));
  }
}

export function setError(id, message, input) {
  const p = $(id);
  p.textContent = message || '';
  if (input) {
    if (message) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
}

/** Debounce with a maximum wait, so a steady burst still refreshes. */
export function debounce(fn, wait, maxWait = wait * 8) {
  let timer = 0;
  let first = 0;
  return (...args) => {
    const now = performance.now();
    if (!timer) first = now;
    clearTimeout(timer);
    const delay = Math.max(0, Math.min(wait, maxWait - (now - first)));
    timer = setTimeout(() => { timer = 0; fn(...args); }, delay);
  };
}
