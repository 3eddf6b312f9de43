// The page's one palette is the custom properties of style.css, each colour
// written once with its light and its dark value (light-dark()). What CSS
// does not paint itself -- the ring and the table strip on canvas, the
// exported ring picture -- reads the same variables here instead of keeping
// colours of its own.
//
// getPropertyValue() would answer a variable's text ("light-dark(#fff,
// #1b1f27)"), which a canvas cannot use: a hidden probe element is given
// the variable as its colour and the browser resolves it, in the page's
// scheme or in the one asked for ('light' for a picture that is always
// light). Each read forces a style pass: callers read once per theme.

let probe = null;

function probeIn(scheme) {
  if (!probe) {
    probe = document.createElement('span');
    probe.hidden = true;
    probe.dataset.palette = 'probe';
    document.body.appendChild(probe);
  }
  // CSSOM, not a style attribute: the page's CSP allows it.
  probe.style.colorScheme = scheme || '';
  return probe;
}

/** "rgb(29, 35, 48)" as "#1d2330"; a translucent colour as it is. */
function hex(colour) {
  const m = /^rgb\((\d+), (\d+), (\d+)\)$/.exec(colour);
  return m ? `#${m.slice(1).map((v) => Number(v).toString(16).padStart(2, '0')).join('')}` : colour;
}

/**
 * The colours of the CSS variables `names` ('--text', …) as the page shows
 * them now, or in `scheme` ('light' or 'dark'): {name: '#rrggbb'}.
 */
export function cssColours(names, scheme) {
  const p = probeIn(scheme);
  const out = {};
  for (const name of names) {
    p.style.color = `var(${name})`;
    out[name] = hex(getComputedStyle(p).color);
  }
  p.style.color = '';
  return out;
}

/** One variable's colour (see cssColours). */
export function cssColour(name, scheme) {
  return cssColours([name], scheme)[name];
}
