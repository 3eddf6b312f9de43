// The ring picture: three stacked layers over one square.
//
//   base canvas    the layout the server sends (/api/ring): node arcs from
//                  ring points, or runs of a lookup table (maglev entries,
//                  redis slots), or, for algorithms without a layout (jump),
//                  each node's share as a sector; inside it a band shading
//                  each arc by its node's load against the ideal; keys as
//                  dots or, past a threshold, as a density band. Redrawn only
//                  when the data, the size or the theme change.
//   overlay canvas hover and keyboard cursor, the looked-up key's route and
//                  preference list, the flow of moved keys; per frame.
//   svg            tick labels and node labels as real text (names through
//                  textContent only), so that screen readers and tests find
//                  them.
//
// Everything is drawn on one circle of 2^32 drawing positions (the server
// scales every space to it); space.js labels it in the algorithm's units.
// The ring decides nothing: owners, points and preference lists are the
// server's. Cost of a base redraw: O(segments + bins + drawn keys); past a
// few segments per pixel the arcs are drawn binned at screen resolution.
// Hit testing is a binary search over segment ends.

import {
  RING_SIZE, coloursClose, displayName, formatBig, formatInt, formatPercent, loadColour, nodeColour, shortName,
} from './format.js';
import { cssColours } from './palette.js';
import { spaceAt, ticks } from './space.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const TAU = Math.PI * 2;
const LABEL_LIMIT = 60; // nodes labelled on the ring; beyond that, hover or keyboard
const LABEL_CHARS = 18; // longer names are cut with an ellipsis (full name in <title>)
// The variables of style.css the drawing uses (nodes have their own colours, format.js).
const RING_COLOURS = ['--line', '--muted', '--panel', '--text', '--accent', '--error', '--mark', '--halo', '--on-colour'];

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** First index i with ends[i] >= x, or ends.length. */
function lowerBound(ends, x) {
  let lo = 0;
  let hi = ends.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ends[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Segments of the drawing circle from a layout: parallel arrays, in order.
 * Segment i covers (start[i], end[i]]; the first may start below 0 (it
 * wraps from the last point). Each keeps what the tooltip says about it.
 */
function buildSegments(space, points, runs, nodes) {
  const segs = { start: [], end: [], node: [], info: [], synthetic: false };
  if (runs && runs.length) {
    const n = Number(space.size);
    for (const r of runs) {
      segs.start.push((r.first / n) * RING_SIZE);
      segs.end.push(((r.last + 1) / n) * RING_SIZE);
      segs.node.push(r.node);
      segs.info.push({ kind: 'run', first: r.first, last: r.last });
    }
  } else if (points && points.length) {
    const m = points.length;
    for (let i = 0; i < m; i++) {
      const p = points[i];
      const prev = points[(i - 1 + m) % m];
      segs.start.push(i === 0 ? prev.position - RING_SIZE : prev.position);
      segs.end.push(p.position);
      segs.node.push(p.node);
      segs.info.push({ kind: 'arc', point: i });
    }
    if (m === 1) segs.start[0] = segs.end[0] - RING_SIZE;
  } else if (nodes && nodes.length) {
    // No layout (jump buckets, rendezvous scores): each node's share of the
    // space as a sector, in the order the server lists the nodes.
    segs.synthetic = true;
    let total = 0;
    for (const n of nodes) total += Math.max(0, n.owns ?? n.arc_share ?? 0);
    let at = 0;
    for (const n of nodes) {
      const share = total > 0 ? Math.max(0, n.owns ?? n.arc_share ?? 0) / total : 1 / nodes.length;
      segs.start.push(at);
      at += share * RING_SIZE;
      segs.end.push(at);
      segs.node.push(n.name);
      segs.info.push({ kind: 'share', share });
    }
  }
  return segs;
}

export class RingView {
  constructor({ wrap, base, overlay, svg, tooltip, onSelect, onCursor }) {
    this.wrap = wrap;
    this.base = base;
    this.overlay = overlay;
    this.svg = svg;
    this.tooltip = tooltip;
    this.onSelect = onSelect || (() => {});
    this.onCursor = onCursor || (() => {});
    this.space = { kind: 'ring32', size: 2n ** 32n, signed: false, cell: 'entry', cells: 'entries', hasLayout: false };
    this.points = [];
    this.segs = buildSegments(this.space, [], null, []);
    this.nodes = [];
    this.nodeByName = new Map();
    this.keys = null;
    this.density = null;
    this.mean = 0;
    this.totalKeys = 0;
    this.dark = false;
    this.caption = '';
    this.loading = null;
    this.hover = null;
    this.pointer = null;
    this.cursor = -1; // keyboard: index of the focused segment
    this.path = null;
    this.flow = null;
    this.size = 0;
    this.frame = 0;

    new ResizeObserver(() => this.resize()).observe(wrap);
    overlay.addEventListener('mousemove', (e) => {
      this.pointer = { clientX: e.clientX, clientY: e.clientY };
      this.onMove(this.pointer);
    });
    overlay.addEventListener('mouseleave', () => {
      this.pointer = null;
      this.hover = null;
      if (this.cursor < 0) this.tooltip.hidden = true;
      this.requestOverlay();
    });
    overlay.addEventListener('click', (e) => this.onClick(e));
    overlay.addEventListener('keydown', (e) => this.onKey(e));
    overlay.addEventListener('focus', () => {
      if (this.cursor < 0 && this.segs.end.length) this.moveCursor(0);
      else if (this.cursor >= 0) this.moveCursor(this.cursor);
    });
    overlay.addEventListener('blur', () => {
      this.tooltip.hidden = true;
      this.requestOverlay();
    });
    this.resize();
  }

  /** Geometry in CSS pixels. */
  geom() {
    const s = this.size;
    // Small rings keep more room around for the labels; a ring whose names
    // are long gets smaller, down to a floor, so that the labels beside it
    // fit (issue 25 item 8), then they are cut.
    let R = s * (s < 440 ? 0.33 : 0.37);
    const nodes = this.nodes || [];
    if (nodes.length && nodes.length <= LABEL_LIMIT) {
      let chars = 0;
      for (const n of nodes) chars = Math.max(chars, Math.min(LABEL_CHARS, [...n.name].length) + (n.state === 'down' ? 2 : 0));
      const need = chars * 7.4 + 4;
      R = Math.max(s * (s < 440 ? 0.28 : 0.25), Math.min(R, s / 2 - need - s * 0.012 - 24));
    }
    // Past a hundred nodes single arcs are slivers: the load band, which
    // says more at that scale, gets the width.
    const many = this.nodes.length > 100;
    const band = Math.max(8, s * (many ? 0.016 : 0.024));
    const loadW = Math.max(4, s * (many ? 0.022 : 0.012));
    const loadR = R - band / 2 - loadW / 2 - 1.5;
    const keyOuter = loadR - loadW / 2 - 5;
    return {
      s, cx: s / 2, cy: s / 2, R, band, loadR, loadW, keyOuter,
      keyDepth: R * 0.25,
      tickOut: R + band / 2 + 12,
      labelR: R + band / 2 + 24,
    };
  }

  angle(position) {
    return (position / RING_SIZE) * TAU - Math.PI / 2;
  }

  xy(position, r) {
    const g = this.geom();
    const a = this.angle(position);
    return [g.cx + Math.cos(a) * r, g.cy + Math.sin(a) * r];
  }

  resize() {
    const size = Math.floor(this.wrap.clientWidth);
    if (!size || size === this.size) return;
    this.size = size;
    const dpr = window.devicePixelRatio || 1;
    for (const c of [this.base, this.overlay]) {
      c.width = Math.round(size * dpr);
      c.height = Math.round(size * dpr);
    }
    this.svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
    this.draw();
  }

  /**
   * The data to draw. keys: [{key, node, pos}] (pos on the drawing circle)
   * or null; density: {counts} binned over the drawing circle, or null.
   */
  setData({ space, points, runs, nodes, keys, density, mean, totalKeys, dark, caption, invitation }) {
    this.invitation = !!invitation;
    this.space = space || this.space;
    this.points = points || [];
    this.nodes = nodes || [];
    this.nodeByName = new Map(this.nodes.map((n) => [n.name, n]));
    this.segs = buildSegments(this.space, this.points, runs, this.nodes);
    this.keys = keys || null;
    this.density = density || null;
    this.mean = mean || 0;
    this.totalKeys = totalKeys || 0;
    this.dark = !!dark;
    this.caption = caption || '';
    this.loading = null;
    this.anchors = null;
    this.pieces = null;
    if (this.cursor >= this.segs.end.length) this.cursor = this.segs.end.length - 1;
    this.overlay.setAttribute('aria-valuemax', String(Math.max(0, this.segs.end.length - 1)));
    this.draw();
    // What the pointer or the keyboard rests on may have changed owner.
    if (this.pointer) this.onMove(this.pointer);
    else if (this.cursor >= 0 && document.activeElement === this.overlay) this.moveCursor(this.cursor);
    else if (this.cursor >= 0) this.describeCursor();
  }

  /** Shows a loading state: nothing of the previous data stays visible. */
  setLoading(text) {
    this.loading = text;
    this.points = [];
    this.nodes = [];
    this.nodeByName = new Map();
    this.segs = buildSegments(this.space, [], null, []);
    this.pieces = null;
    this.anchors = null;
    this.keys = null;
    this.density = null;
    this.totalKeys = 0;
    this.path = null;
    this.flow = null;
    this.hover = null;
    this.tooltip.hidden = true;
    this.draw();
  }

  setTheme(dark) {
    this.dark = dark;
    this.themeColours = null;
    this.draw();
  }

  draw() {
    if (!this.size) return;
    this.drawBase();
    this.drawLabels();
    this.requestOverlay();
  }

  ctx(canvas) {
    const ctx = canvas.getContext('2d');
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.size, this.size);
    return ctx;
  }

  /** A colour of the page's palette (style.css); read once per theme (palette.js). */
  css(name) {
    if (!this.themeColours || this.themeColours.dark !== this.dark) {
      this.themeColours = { dark: this.dark, ...cssColours(RING_COLOURS) };
    }
    return this.themeColours[name] || '#888';
  }

  /** The node's load against the ideal (1 = its fair share of the keys). */
  loadRatio(name) {
    const n = this.nodeByName.get(name);
    if (!n || !this.mean) return NaN;
    // load.js's "shade by requests": the node's share of requests × nodes
    if (this.loadBy === 'requests') return typeof n.requests === 'number' ? n.requests * this.nodeByName.size : NaN;
    return n.keys / this.mean;
  }

  /**
   * Runs to draw: [{a0, a1 (drawing positions), node}], consecutive
   * segments of one node merged; past ~3 segments per pixel of
   * circumference the owner is taken per pixel-sized bin (the segment
   * covering the bin's middle), which is what the screen can show anyway.
   */
  drawRuns(g) {
    const { start, end, node } = this.segs;
    const m = end.length;
    const out = [];
    if (!m) return out;
    const pixels = Math.max(360, Math.round(TAU * g.R));
    if (m > pixels * 3) {
      const step = RING_SIZE / pixels;
      let j = 0;
      for (let b = 0; b < pixels; b++) {
        const mid = (b + 0.5) * step;
        while (j < m && end[j] < mid) j++;
        const owner = j < m ? node[j] : node[0];
        const last = out[out.length - 1];
        if (last && last.node === owner) last.a1 = (b + 1) * step;
        else out.push({ a0: b * step, a1: (b + 1) * step, node: owner });
      }
      return out;
    }
    for (let i = 0; i < m; i++) {
      const last = out[out.length - 1];
      if (last && last.node === node[i] && Math.abs(last.a1 - start[i]) < 1) last.a1 = end[i];
      else out.push({ a0: start[i], a1: end[i], node: node[i] });
    }
    return out;
  }

  drawBase() {
    const ctx = this.ctx(this.base);
    const g = this.geom();
    const line = this.css('--line');
    const muted = this.css('--muted');
    const panel = this.css('--panel');

    // Empty track.
    ctx.lineWidth = g.band;
    ctx.strokeStyle = line;
    ctx.beginPath();
    ctx.arc(g.cx, g.cy, g.R, 0, TAU);
    ctx.stroke();

    const runs = this.drawRuns(g);
    this.runs = runs;
    if (runs.length) {
      ctx.lineCap = 'butt';
      // One path per colour: at 1000 nodes that is 1000 strokes, not one per arc.
      const byNode = new Map();
      for (const r of runs) {
        let list = byNode.get(r.node);
        if (!list) byNode.set(r.node, list = []);
        list.push(r);
      }
      const showLoad = this.totalKeys > 0 && this.mean > 0;
      for (const [name, list] of byNode) {
        ctx.strokeStyle = nodeColour(name, 0.92, this.dark);
        ctx.lineWidth = g.band;
        ctx.beginPath();
        for (const r of list) {
          const a0 = this.angle(r.a0);
          const a1 = Math.max(this.angle(r.a1), a0 + 0.0008);
          ctx.moveTo(g.cx + Math.cos(a0) * g.R, g.cy + Math.sin(a0) * g.R);
          ctx.arc(g.cx, g.cy, g.R, a0, a1);
        }
        ctx.stroke();
        if (showLoad) {
          ctx.strokeStyle = loadColour(this.loadRatio(name), this.dark);
          ctx.lineWidth = g.loadW;
          ctx.beginPath();
          for (const r of list) {
            const a0 = this.angle(r.a0);
            const a1 = Math.max(this.angle(r.a1), a0 + 0.0008);
            ctx.moveTo(g.cx + Math.cos(a0) * g.loadR, g.cy + Math.sin(a0) * g.loadR);
            ctx.arc(g.cx, g.cy, g.loadR, a0, a1);
          }
          ctx.stroke();
        }
      }
      // Neighbours whose colours are close get a separator.
      if (runs.length > 1 && runs.length <= 20000) {
        ctx.strokeStyle = panel;
        ctx.lineWidth = 1.5;
        ctx.beginPath();
        for (let i = 0; i < runs.length; i++) {
          const prev = runs[(i - 1 + runs.length) % runs.length];
          if (!coloursClose(prev.node, runs[i].node)) continue;
          const a = this.angle(runs[i].a0);
          ctx.moveTo(g.cx + Math.cos(a) * (g.R - g.band / 2), g.cy + Math.sin(a) * (g.R - g.band / 2));
          ctx.lineTo(g.cx + Math.cos(a) * (g.R + g.band / 2), g.cy + Math.sin(a) * (g.R + g.band / 2));
        }
        ctx.stroke();
      }

      // Point marks, when they can be told apart.
      const pts = this.points;
      if (pts.length && pts.length <= 2000) {
        ctx.lineWidth = pts.length > 400 ? 1 : 2;
        ctx.strokeStyle = this.css('--mark');
        ctx.beginPath();
        for (const p of pts) {
          const a = this.angle(p.position);
          const c = Math.cos(a);
          const s = Math.sin(a);
          ctx.moveTo(g.cx + c * (g.R - g.band / 2 - 1), g.cy + s * (g.R - g.band / 2 - 1));
          ctx.lineTo(g.cx + c * (g.R + g.band / 2 + 3), g.cy + s * (g.R + g.band / 2 + 3));
        }
        ctx.stroke();
      }
      // Each node's anchor (its point #0 on a ring) as a dot.
      if (this.nodes.length <= 64) {
        for (const [name, pos] of this.nodeAnchors()) {
          const [x, y] = this.xy(pos, g.R);
          const down = this.nodeByName && this.nodeByName.get(name) && this.nodeByName.get(name).state === 'down';
          // A node that is down: a hollow ring in its colour, dashed.
          ctx.fillStyle = down ? this.css('--panel') : nodeColour(name, 1, this.dark);
          ctx.strokeStyle = down ? nodeColour(name, 1, this.dark) : this.css('--halo');
          ctx.lineWidth = 2;
          ctx.setLineDash(down ? [3, 2] : []);
          const rr = Math.max(4, g.band * 0.42);
          ctx.beginPath();
          ctx.arc(x, y, rr, 0, TAU);
          ctx.fill();
          ctx.stroke();
          ctx.setLineDash([]);
          if (down) { // and crossed out
            ctx.strokeStyle = this.css('--error');
            ctx.lineWidth = 2.5;
            ctx.beginPath();
            ctx.moveTo(x - rr, y - rr); ctx.lineTo(x + rr, y + rr);
            ctx.moveTo(x + rr, y - rr); ctx.lineTo(x - rr, y + rr);
            ctx.stroke();
          }
        }
      }
    }

    // Ticks every eighth of the space.
    ctx.strokeStyle = muted;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let t = 0; t < 16; t++) {
      const a = this.angle((t / 16) * RING_SIZE);
      const len = t % 4 === 0 ? 9 : (t % 2 === 0 ? 6 : 3);
      const r0 = g.R + g.band / 2 + 1;
      ctx.moveTo(g.cx + Math.cos(a) * r0, g.cy + Math.sin(a) * r0);
      ctx.lineTo(g.cx + Math.cos(a) * (r0 + len), g.cy + Math.sin(a) * (r0 + len));
    }
    ctx.stroke();

    // Keys.
    if (this.keys) {
      for (const k of this.keys) {
        if (k.pos === null) continue;
        const jitter = (Math.floor(k.pos) & 3) * 3.5;
        const [x, y] = this.xy(k.pos, g.keyOuter - 3 - jitter);
        ctx.fillStyle = nodeColour(k.node, 0.95, this.dark);
        ctx.beginPath();
        ctx.arc(x, y, 2.4, 0, TAU);
        ctx.fill();
      }
    } else if (this.density && this.density.counts.length) {
      this.drawDensity(ctx, g, muted);
    }
  }

  /**
   * Keys per slice against the mean per slice: the dashed circle is the
   * mean, a slice twice as full reaches the inner edge. Scaling to the mean
   * (not to the busiest slice) keeps sampling noise small, as it is.
   */
  drawDensity(ctx, g, muted) {
    const { counts } = this.density;
    const n = counts.length;
    let total = 0;
    for (const c of counts) total += c;
    if (!total) return;
    const mean = total / n;
    const byOwner = this.nodes.length <= 24 && this.segs.end.length > 0;
    const plain = this.css('--accent').startsWith('#') && this.css('--accent').length === 7 ? `${this.css('--accent')}99` : this.css('--accent');
    // One filled path per colour: each slice an annular sector from the
    // outer edge inwards, as deep as its count against twice the mean.
    const paths = new Map();
    for (let b = 0; b < n; b++) {
      if (!counts[b]) continue;
      const len = Math.max(1, Math.min(1, counts[b] / (2 * mean)) * g.keyDepth);
      const colour = byOwner ? nodeColour(this.ownerAt(((b + 0.5) / n) * RING_SIZE), 0.85, this.dark) : plain;
      let path = paths.get(colour);
      if (!path) paths.set(colour, path = new Path2D());
      const a0 = this.angle((b / n) * RING_SIZE);
      const a1 = this.angle(((b + 1) / n) * RING_SIZE) + 0.002;
      const r0 = g.keyOuter;
      const r1 = g.keyOuter - len;
      path.moveTo(g.cx + Math.cos(a0) * r0, g.cy + Math.sin(a0) * r0);
      path.lineTo(g.cx + Math.cos(a1) * r0, g.cy + Math.sin(a1) * r0);
      path.lineTo(g.cx + Math.cos(a1) * r1, g.cy + Math.sin(a1) * r1);
      path.lineTo(g.cx + Math.cos(a0) * r1, g.cy + Math.sin(a0) * r1);
      path.closePath();
    }
    for (const [colour, path] of paths) {
      ctx.fillStyle = colour;
      ctx.fill(path);
    }
    ctx.strokeStyle = muted;
    ctx.setLineDash([3, 4]);
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.arc(g.cx, g.cy, g.keyOuter - g.keyDepth / 2, 0, TAU);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  /** Index of the segment covering a drawing position, -1 with none. */
  segmentAt(position) {
    const { start, end } = this.segs;
    if (!end.length) return -1;
    let i = lowerBound(end, position);
    if (i === end.length) i = 0;
    // The wrapping first segment covers positions above the last end too.
    if (i === 0 && position > end[end.length - 1] && start[0] >= 0 && !this.segs.synthetic) return end.length - 1;
    return i;
  }

  ownerAt(position) {
    const i = this.segmentAt(position);
    return i < 0 ? null : this.segs.node[i];
  }

  /** Where each node is labelled: its point #0, else the middle of its largest run. */
  nodeAnchors() {
    if (this.anchors) return this.anchors;
    const anchors = new Map();
    // One point per node: the node stands at its point. With many points a
    // node's point #0 says nothing about where its keys are (nginx's and
    // ketama's first points bunch wherever the hash puts them): it stands at
    // the middle of its largest arc, which is among its points.
    const multi = this.points.length > this.nodes.length;
    if (this.points.length && !multi) {
      for (const p of this.points) if (p.index === 0 && !anchors.has(p.node)) anchors.set(p.node, p.position);
    }
    const best = new Map();
    const { start, end, node } = this.segs;
    for (let i = 0; i < end.length; i++) {
      if (anchors.has(node[i])) continue;
      const len = end[i] - start[i];
      const b = best.get(node[i]);
      if (!b || len > b.len) best.set(node[i], { len, mid: (start[i] + end[i]) / 2 });
    }
    // A node whose largest run is a sliver (a Maglev table interleaves
    // every node) has no place to stand for: it goes unlabelled.
    const floor = this.nodes.length ? RING_SIZE / (4 * this.nodes.length) : 0;
    for (const [name, b] of best) if (b.len >= floor || this.segs.synthetic || multi) anchors.set(name, (b.mid + RING_SIZE) % RING_SIZE);
    this.anchors = anchors;
    return anchors;
  }

  /** The nodes the ring has no room to label, named under it in their colours. */
  drawNodeLegend() {
    const box = document.getElementById('ring-legend-nodes');
    if (!box) return;
    const names = this.unlabelled || [];
    box.hidden = names.length === 0;
    if (!names.length) { box.replaceChildren(); return; }
    const items = names.map((name) => {
      const li = document.createElement('li');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = nodeColour(name, 1, this.dark);
      const node = this.nodeByName && this.nodeByName.get(name);
      li.append(sw, ` ${displayName(name)}${node && node.state === 'down' ? ' (down)' : ''}`);
      li.dataset.node = name;
      return li;
    });
    const head = document.createElement('span');
    head.textContent = `Not labelled on the ring (no room): `;
    const list = document.createElement('ul');
    list.replaceChildren(...items);
    box.replaceChildren(head, list);
  }

  drawLabels() {
    const g = this.geom();
    const svg = this.svg;
    svg.replaceChildren();

    const t = ticks(this.space);
    const tickGroup = svgEl('g', { class: 'ticks' });
    const all = [{ position: 0, label: t.top, title: t.topTitle, top: true }, ...t.ticks];
    // A tick label gives way to a node label that would overlap it.
    const anchors = this.loading ? new Map() : this.nodeAnchors();
    const labelled = anchors.size && anchors.size <= LABEL_LIMIT ? [...anchors.values()] : [];
    const clearance = (44 / (TAU * g.labelR)) * RING_SIZE; // ~44 px of arc
    for (const tick of all) {
      // (The top label, where the space starts and wraps, always stays.)
      if (!tick.top && labelled.some((p) => Math.min(Math.abs(p - tick.position), RING_SIZE - Math.abs(p - tick.position)) < clearance)) continue;
      const a = this.angle(tick.position);
      const r = g.tickOut + 8;
      const c = Math.cos(a);
      const text = svgEl('text', {
        x: (g.cx + c * r).toFixed(1), y: (g.cy + Math.sin(a) * r).toFixed(1), class: tick.top ? 'tick-label tick-top' : 'tick-label',
        'text-anchor': Math.abs(c) < 0.2 ? 'middle' : (c > 0 ? 'start' : 'end'),
        'dominant-baseline': 'middle',
      }, tick.label);
      text.appendChild(svgEl('title', {}, tick.title));
      tickGroup.appendChild(text);
    }
    svg.appendChild(tickGroup);

    // Centre caption.
    const centre = svgEl('g', { class: 'centre' });
    if (this.loading) {
      centre.appendChild(svgEl('text', { x: g.cx, y: g.cy, 'text-anchor': 'middle', class: 'center-title loading-text' }, this.loading));
    } else if (!this.invitation) {
      const nodeCount = this.nodes.length;
      const down = this.nodes.filter((n) => n.state === 'down').length;
      // With a node down the centre says how many serve: "7 up · 1 down".
      centre.appendChild(svgEl('text', {
        x: g.cx, y: g.cy - 10, 'text-anchor': 'middle', class: down ? 'center-value has-down' : 'center-value',
        // Inside the keys' circle however small the ring is.
        'font-size': `${Math.max(11, Math.min(20, (g.keyOuter * 1.35) / (0.62 * (down ? 14 : 9)))).toFixed(1)}px`, // (an attribute: the CSP allows no inline style)
      }, down ? `${formatInt(nodeCount - down)} up · ${formatInt(down)} down` : `${formatInt(nodeCount)} ${nodeCount === 1 ? 'node' : 'nodes'}`));
      centre.appendChild(svgEl('text', {
        x: g.cx, y: g.cy + 14, 'text-anchor': 'middle', class: 'center-title',
      }, `${formatInt(this.totalKeys)} ${this.totalKeys === 1 ? 'key' : 'keys'}${this.caption ? ` · ${this.caption}` : ''}`));
    }
    svg.appendChild(centre);

    // Node labels at each node's anchor, staggered to avoid overlaps; long
    // names cut with an ellipsis, the full name in <title>.
    const labels = svgEl('g', { class: 'node-labels' });
    const fitted = [];
    // Labels may use the panel's padding beside the drawing, never beyond it.
    const panel = this.wrap.closest('.panel');
    let margin = 0;
    if (panel) {
      const p = panel.getBoundingClientRect();
      const w = this.wrap.getBoundingClientRect();
      margin = Math.max(0, Math.min(w.left - p.left, p.right - w.right) - 4);
    }
    if (anchors.size && anchors.size <= LABEL_LIMIT && !this.loading) {
      // Labels never overlap: each side of the ring (right, left) stacks its
      // labels top to bottom at least a line apart, as near to their node's
      // anchor as that allows, on a circle outside the ticks; a leader line
      // joins each label to its anchor. When a side cannot hold its labels,
      // the nodes with the smallest arcs go unlabelled and the legend under
      // the ring names them (ring-legend-nodes).
      const LINE = 16;
      const top = 10;
      const bottom = g.s - 10;
      const r = g.labelR;
      const room = Math.floor((bottom - top) / LINE) + 1;
      const sides = [[], []];
      for (const [name, pos] of anchors) {
        const a = this.angle(pos);
        const x = Math.cos(a);
        const y = g.cy + Math.sin(a) * r;
        sides[x >= 0 ? 0 : 1].push({ name, pos, a, want: Math.min(bottom, Math.max(top, y)) });
      }
      const dropped = [];
      const share = (name) => {
        const n = this.nodeByName && this.nodeByName.get(name);
        return n ? (n.arc_share || 0) : 0;
      };
      for (const side of sides) {
        if (side.length > room) {
          side.sort((p, q) => share(q.name) - share(p.name));
          dropped.push(...side.splice(room).map((l) => l.name));
        }
        side.sort((p, q) => p.want - q.want);
        // Down from the top, then back up from the bottom: the least shift
        // that keeps every pair a line apart inside the drawing.
        let prev = -Infinity;
        for (const l of side) { l.y = Math.max(l.want, prev + LINE); prev = l.y; }
        let next = Infinity;
        for (let i = side.length - 1; i >= 0; i--) { side[i].y = Math.min(side[i].y, next - LINE, bottom); next = side[i].y; }
        prev = -Infinity;
        for (const l of side) { l.y = Math.max(l.y, prev + LINE, top); prev = l.y; }
      }
      this.unlabelled = dropped;
      for (const [k, side] of sides.entries()) {
        for (const l of side) {
          const { name, a } = l;
          const dy = l.y - g.cy;
          const dx = Math.sqrt(Math.max(0, r * r - dy * dy));
          const x = g.cx + (k === 0 ? Math.max(dx, 14) : -Math.max(dx, 14));
          const c = Math.cos(a);
          const sn = Math.sin(a);
          const colour = nodeColour(name, 1, this.dark);
          const node = this.nodeByName && this.nodeByName.get(name);
          const down = !!node && node.state === 'down';
          labels.appendChild(svgEl('polyline', {
            points: `${(g.cx + c * (g.R + g.band / 2 + 2)).toFixed(1)},${(g.cy + sn * (g.R + g.band / 2 + 2)).toFixed(1)} `
              + `${(g.cx + c * (g.tickOut - 4)).toFixed(1)},${(g.cy + sn * (g.tickOut - 4)).toFixed(1)} `
              + `${(x + (k === 0 ? -3 : 3)).toFixed(1)},${l.y.toFixed(1)}`,
            class: down ? 'leader leader-down' : 'leader', stroke: colour, fill: 'none',
          }));
          // Room left to the edge of the drawing decides how much of the
          // name fits; the label is measured and cut further if it must.
          const roomPx = (k === 0 ? g.s - x : x) + margin - 3 - (down ? 16 : 0);
          const fit = Math.max(4, Math.min(LABEL_CHARS, Math.floor(roomPx / 7.2)));
          const text = svgEl('text', {
            x: x.toFixed(1), y: l.y.toFixed(1),
            class: down ? 'node-label node-down' : 'node-label', 'dominant-baseline': 'middle',
            'text-anchor': k === 0 ? 'start' : 'end',
            'data-node': name,
            'data-anchor': String(Math.round(l.pos)),
          });
          text.textContent = shortName(name, fit);
          if (down) text.appendChild(svgEl('tspan', { class: 'down-tag' }, ' ✕'));
          text.appendChild(svgEl('title', {}, `${displayName(name)}${down ? ' (down)' : ''}`));
          labels.appendChild(text);
          fitted.push({ text, name, fit, room: roomPx });
        }
      }
    } else {
      this.unlabelled = [];
    }
    svg.appendChild(labels);
    for (const f of fitted) {
      // Measured once in place: a name of wide letters is cut shorter.
      let { fit } = f;
      while (fit > 2 && f.text.getComputedTextLength() > f.room + (f.text.querySelector('.down-tag') ? 16 : 0)) {
        fit--;
        f.text.firstChild.textContent = shortName(f.name, fit);
      }
    }
    // A tick label that a node label covers gives way to it.
    const boxes = fitted.map((f) => f.text.getBBox());
    for (const t of [...tickGroup.querySelectorAll('text')]) {
      const b = t.getBBox();
      if (boxes.some((o) => b.x < o.x + o.width && o.x < b.x + b.width && b.y < o.y + o.height && o.y < b.y + b.height)) t.remove();
    }
    this.drawNodeLegend();
  }

  // ---- overlay: hover, keyboard cursor, route, moves ---------------------

  requestOverlay() {
    if (this.frame) return;
    this.frame = requestAnimationFrame((t) => {
      this.frame = 0;
      this.drawOverlay(t);
    });
  }

  drawOverlay(now) {
    const ctx = this.ctx(this.overlay);
    const g = this.geom();
    const text = this.css('--text');

    if (this.flow) this.drawFlow(ctx, g, now);
    if (this.path) this.drawPath(ctx, g, this.path);

    if (this.cursor >= 0 && this.cursor < this.segs.end.length && document.activeElement === this.overlay) {
      const a0 = this.angle(this.segs.start[this.cursor]);
      const a1 = Math.max(this.angle(this.segs.end[this.cursor]), a0 + 0.01);
      ctx.strokeStyle = text;
      ctx.lineWidth = 3;
      ctx.beginPath();
      ctx.arc(g.cx, g.cy, g.R + g.band / 2 + 4, a0, a1);
      ctx.stroke();
      ctx.beginPath();
      ctx.arc(g.cx, g.cy, g.R - g.band / 2 - 4, a0, a1);
      ctx.stroke();
    }

    if (this.hover) {
      const [x, y] = this.xy(this.hover.position, this.hover.radius ?? g.R);
      ctx.strokeStyle = text;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(x, y, 7, 0, TAU);
      ctx.stroke();
    }
  }

  /** Where a node sits for the flow of moves: its anchor, or the centre. */
  anchorXY(name, r) {
    const g = this.geom();
    const pos = name === null ? undefined : this.nodeAnchors().get(name);
    return pos === undefined ? [g.cx, g.cy] : this.xy(pos, r);
  }

  drawFlow(ctx, g, now) {
    const { pairs, start } = this.flow;
    const r = g.R - g.band / 2 - 2;
    const max = pairs.reduce((m, p) => Math.max(m, p.keys), 1);
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    const t = reduce ? 1 : Math.min(1, (now - start) / 1600);
    const anchors = this.nodeAnchors();
    for (const p of pairs) {
      // Only between nodes that have a place on the drawing (a node that
      // left is the centre).
      if (!anchors.has(p.to) || (p.from !== null && !anchors.has(p.from) && this.nodeByName.has(p.from))) continue;
      const [x0, y0] = this.anchorXY(p.from, r);
      const [x1, y1] = this.anchorXY(p.to, r);
      const kx = (x0 + x1) / 2 * 0.4 + g.cx * 0.6;
      const ky = (y0 + y1) / 2 * 0.4 + g.cy * 0.6;
      ctx.strokeStyle = nodeColour(p.to, t < 1 ? 0.55 : 0.35, this.dark);
      ctx.lineWidth = 1 + 5 * Math.sqrt(p.keys / max);
      ctx.beginPath();
      ctx.moveTo(x0, y0);
      ctx.quadraticCurveTo(kx, ky, x1, y1);
      ctx.stroke();
      if (t < 1) {
        const dots = Math.max(1, Math.min(6, Math.round(Math.log2(p.keys + 1))));
        for (let d = 0; d < dots; d++) {
          const u = Math.min(1, Math.max(0, t * 1.4 - d * 0.08));
          const x = (1 - u) ** 2 * x0 + 2 * (1 - u) * u * kx + u * u * x1;
          const y = (1 - u) ** 2 * y0 + 2 * (1 - u) * u * ky + u * u * y1;
          ctx.fillStyle = nodeColour(u < 0.5 ? p.from : p.to, 1, this.dark);
          ctx.beginPath();
          ctx.arc(x, y, 3.5, 0, TAU);
          ctx.fill();
        }
      }
    }
    if (t < 1) this.requestOverlay();
  }

  drawPath(ctx, g, path) {
    const textColour = this.css('--text');
    const panel = this.css('--panel');
    const r = g.R + g.band / 2 + 6;
    const owner = path.replicas && path.replicas.length ? path.replicas[0] : path.node;
    // The route: from the key to the point that decided, when the server
    // names one (ring-like algorithms): clockwise to the next point, or the
    // short way to the nearest one on either side (HAProxy).
    let ownerPos = null;
    if (path.point && Number.isFinite(path.point.position) && path.pos !== null) {
      ownerPos = path.point.position;
      const a0 = this.angle(path.pos);
      let a1 = this.angle(ownerPos);
      if (a1 < a0) a1 += TAU;
      const back = !!path.nearest && a1 - a0 > Math.PI;
      if (back) a1 -= TAU;
      this.overlay.dataset.route = back ? 'counterclockwise' : 'clockwise';
      const colour = nodeColour(owner, 1, this.dark);
      ctx.strokeStyle = colour;
      ctx.lineWidth = 3;
      ctx.setLineDash([6, 4]);
      ctx.beginPath();
      ctx.arc(g.cx, g.cy, r, a0, a1, back);
      ctx.stroke();
      ctx.setLineDash([]);
      const ax = g.cx + Math.cos(a1) * r;
      const ay = g.cy + Math.sin(a1) * r;
      const tangent = a1 + (back ? -1 : 1) * Math.PI / 2;
      ctx.fillStyle = colour;
      ctx.beginPath();
      ctx.moveTo(ax + Math.cos(tangent) * 7, ay + Math.sin(tangent) * 7);
      ctx.lineTo(ax + Math.cos(a1) * 5, ay + Math.sin(a1) * 5);
      ctx.lineTo(ax - Math.cos(a1) * 5, ay - Math.sin(a1) * 5);
      ctx.closePath();
      ctx.fill();
    } else if (path.pos !== null && this.ownerAt(path.pos) === owner) {
      ownerPos = path.pos; // a table entry or slot: the key's cell is its owner's
    } else if (owner) {
      ownerPos = this.nodeAnchors().get(owner) ?? null;
    }
    // The key: a marker with a spoke from the centre.
    if (path.pos !== null) {
      const [kx, ky] = this.xy(path.pos, g.R);
      ctx.strokeStyle = textColour;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(g.cx, g.cy);
      ctx.lineTo(kx, ky);
      ctx.stroke();
      ctx.fillStyle = panel;
      ctx.lineWidth = 2.5;
      ctx.beginPath();
      ctx.arc(kx, ky, 6, 0, TAU);
      ctx.fill();
      ctx.stroke();
    }
    // The preference list: 1 at the owner, then each replica where the walk
    // meets it: the next arc of that node clockwise.
    const marks = [];
    if (owner && ownerPos !== null) marks.push({ n: 1, name: owner, pos: ownerPos });
    const replicas = path.replicas || [];
    if (replicas.length > 1 && ownerPos !== null) {
      let from = this.segmentAt(ownerPos);
      for (let k = 1; k < replicas.length; k++) {
        const at = this.nextSegmentOf(replicas[k], from);
        if (at < 0) break;
        const pos = this.points.length ? this.segs.end[at] : (this.segs.start[at] + this.segs.end[at]) / 2;
        marks.push({ n: k + 1, name: replicas[k], pos });
        from = at;
      }
    }
    for (const m of marks) {
      const [x, y] = this.xy(m.pos, g.R + g.band / 2 + 16);
      ctx.fillStyle = nodeColour(m.name, 1, this.dark);
      ctx.strokeStyle = panel;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(x, y, 9, 0, TAU);
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = this.css('--on-colour');
      ctx.font = 'bold 11px system-ui, sans-serif';
      ctx.textAlign = 'center';
      ctx.textBaseline = 'middle';
      ctx.fillText(String(m.n), x, y + 0.5);
    }
  }

  /** The next segment of `name` clockwise after segment `from`, -1 if none. */
  nextSegmentOf(name, from) {
    const m = this.segs.end.length;
    for (let step = 1; step <= m; step++) {
      const i = (from + step) % m;
      if (this.segs.node[i] === name) return i;
    }
    return -1;
  }

  /**
   * The looked-up key: {pos (drawing position or null), point (the
   * server's deciding point, {position} or null), replicas (the server's
   * preference list, owner first), nearest (the point is the nearest on
   * either side: the route goes the short way)}; null clears it.
   */
  setPath(path) {
    this.path = path;
    if (!path) delete this.overlay.dataset.route;
    this.requestOverlay();
  }

  /** Shows the keys that moved between nodes as flows; pairs [{from, to, keys}]. */
  showFlow(pairs) {
    this.flow = pairs && pairs.length ? { pairs: pairs.slice(0, 24), start: performance.now() } : null;
    this.requestOverlay();
  }

  clearHighlights() {
    this.flow = null;
    this.requestOverlay();
  }

  // ---- hit testing, tooltip, keyboard ----------------------------------------

  locate(pointer) {
    const rect = this.overlay.getBoundingClientRect();
    const x = pointer.clientX - rect.left;
    const y = pointer.clientY - rect.top;
    const g = this.geom();
    const dx = x - g.cx;
    const dy = y - g.cy;
    const r = Math.hypot(dx, dy);
    let a = Math.atan2(dy, dx) + Math.PI / 2;
    if (a < 0) a += TAU;
    const position = Math.min(RING_SIZE - 1, (a / TAU) * RING_SIZE);
    return { x, y, r, position, g };
  }

  /** What is under the pointer: a point, an arc or run, a key or a density slice. */
  hit(pointer) {
    const { x, y, r, position, g } = this.locate(pointer);
    if (Math.abs(r - g.R) <= g.band / 2 + 8 || Math.abs(r - g.loadR) <= g.loadW / 2 + 1) {
      const i = this.segmentAt(position);
      if (i < 0) return null;
      if (this.points.length) {
        // Near a point: the point itself.
        const pxPerPos = (TAU * g.R) / RING_SIZE;
        for (const c of [i, (i - 1 + this.points.length) % this.points.length]) {
          const p = this.points[c];
          let d = Math.abs(p.position - position);
          d = Math.min(d, RING_SIZE - d) * pxPerPos;
          if (d <= 5) return { kind: 'point', x, y, segment: c, position: p.position, node: p.node, radius: g.R };
        }
      }
      return { kind: 'segment', x, y, segment: i, position, node: this.segs.node[i], radius: g.R };
    }
    if (r < g.keyOuter + 2 && r > g.keyOuter - g.keyDepth - 4) {
      if (this.keys && this.keys.length) {
        let best = null;
        const keyPx = (TAU * (g.keyOuter - 8)) / RING_SIZE;
        for (const k of this.keys) {
          if (k.pos === null) continue;
          let d = Math.abs(k.pos - position);
          d = Math.min(d, RING_SIZE - d) * keyPx;
          if (d <= 6 && (!best || d < best.d)) best = { d, key: k };
        }
        if (best) {
          return { kind: 'key', x, y, key: best.key.key, position: best.key.pos, node: best.key.node, replicas: best.key.replicas, radius: g.keyOuter - 3 - (Math.floor(best.key.pos) & 3) * 3.5 };
        }
      } else if (this.density) {
        const n = this.density.counts.length;
        const b = Math.min(n - 1, Math.floor((position / RING_SIZE) * n));
        let total = 0;
        for (const c of this.density.counts) total += c;
        return {
          kind: 'bin', x, y, position, count: this.density.counts[b], mean: total / n,
          from: (b / n) * RING_SIZE, to: ((b + 1) / n) * RING_SIZE, node: this.ownerAt(((b + 0.5) / n) * RING_SIZE), radius: g.keyOuter - 3,
        };
      }
    }
    return null;
  }

  /** Lines describing a segment: owner, extent in the space's units, load. */
  segmentLines(i) {
    const lines = [];
    const name = this.segs.node[i];
    const info = this.segs.info[i];
    const node = this.nodeByName.get(name);
    if (info.kind === 'arc') {
      const p = this.points[info.point];
      const prev = this.points[(info.point - 1 + this.points.length) % this.points.length];
      lines.push(['', `Arc of ${displayName(name)}`]);
      if (p.coordinate !== undefined) lines.push([this.points.length > 1 ? 'from → to' : 'point', this.points.length > 1 ? `${formatBig(prev.coordinate)} → ${formatBig(p.coordinate)}` : formatBig(p.coordinate)]);
      if (p.index !== undefined) lines.push(['decided by', `point #${p.index} of ${displayName(name)}`]);
    } else if (info.kind === 'run') {
      lines.push(['', `${info.first === info.last ? `${this.space.cell} ${formatInt(info.first)}` : `${this.space.cells} ${formatInt(info.first)}–${formatInt(info.last)}`}`]);
      lines.push(['owner', displayName(name)]);
    } else {
      lines.push(['', `${displayName(name)}`]);
      lines.push(['share of the space', formatPercent(info.share, 2)]);
      lines.push(['', 'no ring: drawn as a sector of its share']);
    }
    if (node) {
      const ratio = this.loadRatio(name);
      const load = `${formatInt(node.keys)}${Number.isFinite(ratio) ? ` (×${ratio.toFixed(2)} the mean)` : ''}`;
      const pieces = this.segmentsOf(name);
      if (info.kind === 'share' || pieces <= 1) {
        lines.push(['keys', load]);
      } else {
        // One of the node's arcs (or runs): its own keys when they are drawn
        // one by one, and the node's total, named as such.
        const own = this.keysIn(i);
        if (own !== null) lines.push([info.kind === 'run' ? 'keys in these cells' : 'keys in this arc', formatInt(own)]);
        lines.push([`keys of ${displayName(name)}, all ${formatInt(pieces)} ${info.kind === 'run' ? 'runs' : 'arcs'}`, load]);
      }
    }
    return lines;
  }

  /** How many segments a node has (its arcs or runs). */
  segmentsOf(name) {
    if (!this.pieces) {
      this.pieces = new Map();
      for (const n of this.segs.node) this.pieces.set(n, (this.pieces.get(n) || 0) + 1);
    }
    return this.pieces.get(name) || 0;
  }

  /** Keys drawn in segment i, or null when keys are not drawn one by one. */
  keysIn(i) {
    if (!this.keys) return null;
    const a = this.segs.start[i];
    const b = this.segs.end[i];
    let count = 0;
    for (const k of this.keys) {
      if (k.pos === null) continue;
      const p = k.pos;
      if ((p > a && p <= b) || (a < 0 && p - RING_SIZE > a)) count++;
    }
    return count;
  }

  onMove(pointer) {
    const h = this.hit(pointer);
    this.hover = h;
    const tip = this.tooltip;
    if (!h) {
      if (this.cursor < 0 || document.activeElement !== this.overlay) tip.hidden = true;
      this.requestOverlay();
      return;
    }
    let lines;
    if (h.kind === 'point') {
      const p = this.points[h.segment];
      lines = [['', `Point of ${displayName(h.node)}`]];
      if (p.coordinate !== undefined) lines.push(['coordinate', formatBig(p.coordinate)]);
      if (p.index !== undefined) lines.push(['point', p.index === 0 ? '#0 (the name)' : `#${p.index}`]);
      lines.push(['owner', displayName(h.node)]);
    } else if (h.kind === 'segment') {
      lines = this.segmentLines(h.segment);
      lines.splice(1, 0, ['at', spaceAt(this.space, h.position)]);
      lines.push(['owner', displayName(h.node)]);
    } else if (h.kind === 'key') {
      lines = [['', `Key ${displayName(h.key)}`], ['at', spaceAt(this.space, h.position)], ['owner', displayName(h.node)]];
      if (h.replicas && h.replicas.length > 1) lines.push(['replicas', h.replicas.map(displayName).join(', ')]);
    } else {
      lines = [
        ['', `${formatInt(h.count)} keys`],
        ['slice', `${spaceAt(this.space, h.from)} – ${spaceAt(this.space, h.to)}`],
        ['against the mean slice', `×${(h.count / (h.mean || 1)).toFixed(2)}`],
        ['owner at the middle', displayName(h.node)],
      ];
    }
    this.showTip(lines, h.x, h.y);
    this.requestOverlay();
  }

  showTip(lines, x, y) {
    const tip = this.tooltip;
    tip.replaceChildren();
    for (const [label, value] of lines) {
      const div = document.createElement('div');
      if (!label) div.className = 't-name';
      div.textContent = label ? `${label}: ${value}` : value;
      tip.appendChild(div);
    }
    tip.hidden = false;
    const g = this.geom();
    const w = tip.offsetWidth;
    const h = tip.offsetHeight;
    tip.style.left = `${Math.max(0, Math.min(g.s - w - 4, x + 14))}px`;
    tip.style.top = `${Math.max(0, Math.min(g.s - h - 4, y + 14))}px`;
  }

  onClick(e) {
    const h = this.hit({ clientX: e.clientX, clientY: e.clientY });
    this.onSelect(h && h.kind === 'segment' ? { ...h, lines: this.segmentLines(h.segment) } : h);
  }

  /** Keyboard: arrows step through arcs, Page keys by 1/16 of the space. */
  onKey(e) {
    const m = this.segs.end.length;
    if (!m) return;
    let next = this.cursor < 0 ? 0 : this.cursor;
    const jump = (frac) => {
      const here = this.cursor < 0 ? 0 : this.segs.end[this.cursor];
      return this.segmentAt((((here + frac * RING_SIZE) % RING_SIZE) + RING_SIZE) % RING_SIZE + 1);
    };
    switch (e.key) {
      case 'ArrowRight': case 'ArrowDown': next = (next + 1) % m; break;
      case 'ArrowLeft': case 'ArrowUp': next = (next - 1 + m) % m; break;
      case 'PageDown': next = jump(1 / 16); break;
      case 'PageUp': next = jump(-1 / 16); break;
      case 'Home': next = 0; break;
      case 'End': next = m - 1; break;
      case 'Enter': case ' ':
        e.preventDefault();
        if (this.cursor >= 0) {
          const c = this.cursor;
          this.onSelect({ kind: 'segment', segment: c, node: this.segs.node[c], position: this.segs.end[c], lines: this.segmentLines(c) });
        }
        return;
      case 'Escape':
        this.tooltip.hidden = true;
        return;
      default: return;
    }
    e.preventDefault();
    this.moveCursor(next);
  }

  moveCursor(i) {
    if (i < 0 || i >= this.segs.end.length) return;
    this.cursor = i;
    this.describeCursor();
    const g = this.geom();
    const mid = (this.segs.start[i] + this.segs.end[i]) / 2;
    const [x, y] = this.xy((mid + RING_SIZE) % RING_SIZE, g.R);
    this.showTip(this.segmentLines(i), x, y);
    this.requestOverlay();
  }

  describeCursor() {
    const i = this.cursor;
    if (i < 0 || i >= this.segs.end.length) return;
    const text = this.segmentLines(i).map(([k, v]) => (k ? `${k} ${v}` : v)).join(', ');
    this.overlay.setAttribute('aria-valuenow', String(i));
    this.overlay.setAttribute('aria-valuetext', `${i + 1} of ${this.segs.end.length}: ${text}`);
    this.onCursor(this.segs.node[i]);
  }
}
