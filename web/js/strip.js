// A lookup table as a strip: Maglev's entries, Redis's slots.
//
// The ring draws a table as a circle; this strip shows it the way the
// system keeps it, left to right: the whole table squeezed to the width
// (each pixel column coloured by the owner at its middle), and below it a
// window of WINDOW cells around the looked-up key's cell, one cell per
// entry, so that Maglev's interleaving and Redis's ranges can be read. The
// runs [{first, last, node}] are the server's; nothing is computed here.

import {
  formatInt, nodeColour, displayName, visibleText,
} from './format.js';
import { cssColour } from './palette.js';

const WINDOW = 48;

export class TableStrip {
  constructor({ box, canvas, caption }) {
    this.box = box;
    this.canvas = canvas;
    this.caption = caption;
    this.runs = null;
    this.size = 0;
    this.focus = null;
    this.dark = false;
    new ResizeObserver(() => this.draw()).observe(canvas);
  }

  /** runs from /api/ring (null hides the strip); space from space.js. */
  setData(runs, space, dark) {
    this.runs = runs && runs.length ? runs : null;
    this.size = this.runs ? Number(space.size) : 0;
    this.space = space;
    this.dark = dark;
    this.box.hidden = !this.runs;
    if (this.focus && this.focus.entry >= this.size) this.focus = null;
    this.draw();
  }

  /** The theme changed: the node colours and the window's frame follow it. */
  setTheme(dark) {
    this.dark = dark;
    this.draw();
  }

  /** The looked-up key's cell, or null. */
  setFocus(entry, key) {
    this.focus = Number.isFinite(entry) ? { entry, key } : null;
    this.draw();
  }

  ownerOf(entry) {
    const runs = this.runs;
    let lo = 0;
    let hi = runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (runs[mid].last < entry) lo = mid + 1;
      else hi = mid;
    }
    return runs[lo].node;
  }

  draw() {
    if (!this.runs) return;
    const width = Math.floor(this.canvas.clientWidth);
    if (!width) return;
    const dpr = window.devicePixelRatio || 1;
    const height = 46;
    this.canvas.width = Math.round(width * dpr);
    this.canvas.height = Math.round(height * dpr);
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const n = this.size;
    // The whole table, one owner per pixel column.
    for (let x = 0; x < width; x++) {
      const entry = Math.min(n - 1, Math.floor(((x + 0.5) / width) * n));
      ctx.fillStyle = nodeColour(this.ownerOf(entry), 0.95, this.dark);
      ctx.fillRect(x, 0, 1, 14);
    }
    // The window around the focus.
    const centre = this.focus ? this.focus.entry : 0;
    const count = Math.min(WINDOW, n);
    let first = Math.max(0, Math.min(n - count, centre - Math.floor(count / 2)));
    const cell = width / count;
    const text = cssColour('--text');
    for (let i = 0; i < count; i++) {
      const entry = first + i;
      ctx.fillStyle = nodeColour(this.ownerOf(entry), 0.95, this.dark);
      ctx.fillRect(i * cell + 0.5, 20, Math.max(1, cell - 1), 22);
      if (this.focus && entry === this.focus.entry) {
        ctx.strokeStyle = text;
        ctx.lineWidth = 2;
        ctx.strokeRect(i * cell + 1, 19, Math.max(2, cell - 2), 24);
      }
    }
    // Where the window sits in the whole table.
    ctx.strokeStyle = text;
    ctx.lineWidth = 1.5;
    const x0 = (first / n) * width;
    ctx.strokeRect(Math.max(0.75, x0), 0.75, Math.max(2, (count / n) * width), 12.5);
    const last = first + count - 1;
    const cells = this.space.cells;
    const about = this.focus
      ? `${this.space.cell} ${formatInt(this.focus.entry)} of key “${visibleText(this.focus.key)}” is ${displayName(this.ownerOf(this.focus.entry))}'s`
      : `look up a key to centre the window on its ${this.space.cell}`;
    this.caption.textContent = `Top: all ${formatInt(n)} ${cells}. Below: ${cells} ${formatInt(first)}–${formatInt(last)}, one cell each; ${about}.`;
    this.canvas.setAttribute('aria-label', `The table as a strip. ${this.caption.textContent}`);
  }
}
