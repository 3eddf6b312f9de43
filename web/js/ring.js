// The ring picture: three stacked layers over one square.
//
//   base canvas    node arcs (one colour per node), points, keys as dots or,
//                  past a threshold, as a density band from /api/density;
//                  redrawn only when the data, the size or the theme change.
//   overlay canvas hover mark, the selected key's path to its owner and the
//                  animation of moved keys; redrawn per animation frame.
//   svg            tick labels and node labels as real text, so that screen
//                  readers and tests can find them; names go in with
//                  textContent only.
//
// Position 0 is at the top and positions grow clockwise. Cost of a base
// redraw: O(points + drawn keys or bins); hit testing is a binary search.

import {
  RING_SIZE, angleOf, formatInt, nodeColour, nodeLabel, successorIndex,
} from './format.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
const TAU = Math.PI * 2;
const LABEL_LIMIT = 60; // nodes labelled on the ring; beyond that, hover

function svgEl(name, attrs, text) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

function compactPosition(p) {
  if (p === 0) return '0';
  if (p < 1e9) return `${Math.round(p / 1e6)}M`;
  return `${(p / 1e9).toFixed(2)}G`;
}

export class RingView {
  constructor({ wrap, base, overlay, svg, tooltip, onSelect }) {
    this.wrap = wrap;
    this.base = base;
    this.overlay = overlay;
    this.svg = svg;
    this.tooltip = tooltip;
    this.onSelect = onSelect || (() => {});
    this.points = [];
    this.nodes = [];
    this.nodeByName = new Map();
    this.keys = null;
    this.density = null;
    this.totalKeys = 0;
    this.dark = false;
    this.caption = '';
    this.hover = null;
    this.path = null;
    this.anim = null;
    this.highlights = [];
    this.size = 0;
    this.frame = 0;

    new ResizeObserver(() => this.resize()).observe(wrap);
    overlay.addEventListener('mousemove', (e) => this.onMove(e));
    overlay.addEventListener('mouseleave', () => { this.hover = null; this.tooltip.hidden = true; this.requestOverlay(); });
    overlay.addEventListener('click', (e) => this.onClick(e));
    this.resize();
  }

  /** Geometry in CSS pixels. */
  geom() {
    const s = this.size;
    const R = s * 0.37;
    const band = Math.max(8, s * 0.022);
    return {
      s, cx: s / 2, cy: s / 2, R, band,
      keyOuter: R - band / 2 - 4,
      keyDepth: R * 0.26,
      tickOut: R + band / 2 + 12,
      labelR: R + band / 2 + 30,
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

  setData({ points, nodes, keys, density, totalKeys, dark, caption }) {
    this.points = points || [];
    this.nodes = nodes || [];
    this.nodeByName = new Map(this.nodes.map((n) => [n.name, n]));
    this.keys = keys || null;
    this.density = density || null;
    this.totalKeys = totalKeys || 0;
    this.dark = !!dark;
    this.caption = caption || '';
    this.draw();
  }

  setTheme(dark) {
    this.dark = dark;
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

  css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
  }

  drawBase() {
    const ctx = this.ctx(this.base);
    const g = this.geom();
    const line = this.css('--line');
    const muted = this.css('--muted');

    // Empty track.
    ctx.lineWidth = g.band;
    ctx.strokeStyle = line;
    ctx.beginPath();
    ctx.arc(g.cx, g.cy, g.R, 0, TAU);
    ctx.stroke();

    // Arcs: point i owns (position of point i-1, position of point i].
    // Consecutive points of one node are merged into one stroke.
    const pts = this.points;
    if (pts.length) {
      ctx.lineCap = 'butt';
      let i = 0;
      while (i < pts.length) {
        let j = i;
        while (j + 1 < pts.length && pts[j + 1].node === pts[i].node) j++;
        const startPos = i === 0 ? pts[pts.length - 1].position - RING_SIZE : pts[i - 1].position;
        let a0 = this.angle(startPos);
        const a1 = this.angle(pts[j].position);
        if (pts.length === 1 || (i === 0 && j === pts.length - 1)) a0 = a1 - TAU;
        ctx.strokeStyle = nodeColour(pts[i].node, 0.9, this.dark);
        ctx.beginPath();
        ctx.arc(g.cx, g.cy, g.R, a0, Math.max(a1, a0 + 0.0005));
        ctx.stroke();
        i = j + 1;
      }
      // Wrap arc of point 0 when merged with the last run: the loop above
      // draws from the last point to the first, so nothing is left out.

      // Point marks.
      if (pts.length <= 6000) {
        ctx.lineWidth = pts.length > 600 ? 1 : 2;
        ctx.strokeStyle = this.dark ? '#f4f6fa' : '#1d2330';
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
      // Node main points (point 0) as dots.
      if (this.nodes.length <= 64) {
        for (const n of this.nodes) {
          const [x, y] = this.xy(n.position, g.R);
          ctx.fillStyle = nodeColour(n.name, 1, this.dark);
          ctx.strokeStyle = this.dark ? '#f4f6fa' : '#ffffff';
          ctx.lineWidth = 2;
          ctx.beginPath();
          ctx.arc(x, y, Math.max(4, g.band * 0.45), 0, TAU);
          ctx.fill();
          ctx.stroke();
        }
      }
    }

    // Ticks every 2^28, longer every 2^30.
    ctx.strokeStyle = muted;
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let t = 0; t < 16; t++) {
      const pos = t * 2 ** 28;
      const a = this.angle(pos);
      const len = t % 4 === 0 ? 9 : 5;
      const r0 = g.R + g.band / 2 + 1;
      ctx.moveTo(g.cx + Math.cos(a) * r0, g.cy + Math.sin(a) * r0);
      ctx.lineTo(g.cx + Math.cos(a) * (r0 + len), g.cy + Math.sin(a) * (r0 + len));
    }
    ctx.stroke();

    // Keys.
    if (this.keys) {
      for (const k of this.keys) {
        const jitter = (k.position & 3) * 3.5;
        const [x, y] = this.xy(k.position, g.keyOuter - 3 - jitter);
        ctx.fillStyle = nodeColour(k.node, 0.95, this.dark);
        ctx.beginPath();
        ctx.arc(x, y, 2.4, 0, TAU);
        ctx.fill();
      }
    } else if (this.density && this.density.counts.length) {
      const { counts } = this.density;
      const n = counts.length;
      let max = 0;
      for (const c of counts) if (c > max) max = c;
      if (max > 0) {
        const slice = RING_SIZE / n;
        const sweep = TAU / n;
        const byOwner = this.nodes.length <= 24;
        const plain = this.css('--accent');
        for (let b = 0; b < n; b++) {
          if (!counts[b]) continue;
          const len = Math.max(1.5, (counts[b] / max) * g.keyDepth);
          const a0 = this.angle(b * slice);
          // Few nodes: colour each slice by its owner. Many: one colour, as
          // hundreds of hues side by side read as noise.
          ctx.strokeStyle = byOwner
            ? nodeColour(this.ownerOf(Math.floor((b + 0.5) * slice)), 0.85, this.dark)
            : plain;
          ctx.lineWidth = len;
          ctx.beginPath();
          ctx.arc(g.cx, g.cy, g.keyOuter - len / 2, a0, a0 + sweep + 0.002);
          ctx.stroke();
        }
      }
    }
  }

  ownerOf(position) {
    if (!this.points.length) return null;
    return this.points[successorIndex(this.points, position)].node;
  }

  drawLabels() {
    const g = this.geom();
    const svg = this.svg;
    svg.replaceChildren();

    // Tick labels every 2^29.
    const ticks = svgEl('g', { class: 'ticks' });
    for (let t = 0; t < 8; t++) {
      const pos = t * 2 ** 29;
      const a = this.angle(pos);
      const r = g.tickOut + 8;
      const x = g.cx + Math.cos(a) * r;
      const y = g.cy + Math.sin(a) * r;
      const label = t === 0 ? '0 ↺ 2³²−1' : compactPosition(pos);
      const text = svgEl('text', {
        x: x.toFixed(1), y: y.toFixed(1), class: 'tick-label',
        'text-anchor': Math.abs(Math.cos(a)) < 0.2 ? 'middle' : (Math.cos(a) > 0 ? 'start' : 'end'),
        'dominant-baseline': 'middle',
      }, label);
      text.appendChild(svgEl('title', {}, `position ${formatInt(pos)}`));
      ticks.appendChild(text);
    }
    svg.appendChild(ticks);

    // Centre caption.
    const centre = svgEl('g', { class: 'centre' });
    const nodeCount = this.nodes.length;
    centre.appendChild(svgEl('text', {
      x: g.cx, y: g.cy - 10, 'text-anchor': 'middle', class: 'center-value',
    }, `${formatInt(nodeCount)} ${nodeCount === 1 ? 'node' : 'nodes'}`));
    centre.appendChild(svgEl('text', {
      x: g.cx, y: g.cy + 14, 'text-anchor': 'middle', class: 'center-title',
    }, `${formatInt(this.totalKeys)} ${this.totalKeys === 1 ? 'key' : 'keys'}${this.caption ? ` · ${this.caption}` : ''}`));
    svg.appendChild(centre);

    // Node labels at each node's main point, staggered to avoid overlaps.
    const labels = svgEl('g', { class: 'node-labels' });
    if (nodeCount && nodeCount <= LABEL_LIMIT) {
      const sorted = [...this.nodes].sort((a, b) => a.position - b.position);
      const levels = [-Infinity, -Infinity, -Infinity];
      const minGap = 15;
      for (const n of sorted) {
        const a = this.angle(n.position);
        let level = -1;
        for (let l = 0; l < levels.length; l++) {
          const r = g.labelR + l * 22;
          if ((a - levels[l]) * r >= minGap) { level = l; break; }
        }
        if (level < 0) level = levels.indexOf(Math.min(...levels));
        levels[level] = a;
        const r = g.labelR + level * 22;
        const c = Math.cos(a);
        const s = Math.sin(a);
        const colour = nodeColour(n.name, 1, this.dark);
        labels.appendChild(svgEl('line', {
          x1: (g.cx + c * (g.R + g.band / 2 + 2)).toFixed(1), y1: (g.cy + s * (g.R + g.band / 2 + 2)).toFixed(1),
          x2: (g.cx + c * (r - 4)).toFixed(1), y2: (g.cy + s * (r - 4)).toFixed(1),
          class: 'leader', stroke: colour,
        }));
        const text = svgEl('text', {
          x: (g.cx + c * r).toFixed(1), y: (g.cy + s * r).toFixed(1),
          class: 'node-label', 'dominant-baseline': 'middle',
          'text-anchor': Math.abs(c) < 0.25 ? 'middle' : (c > 0 ? 'start' : 'end'),
          'data-node': n.name,
        });
        text.textContent = n.name;
        text.appendChild(svgEl('title', {}, `${n.name}: position ${formatInt(n.position)}`));
        labels.appendChild(text);
      }
    }
    svg.appendChild(labels);
  }

  // ---- overlay: hover, selected path, moved keys ------------------------

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

    // Moved keys stay marked until the next change.
    for (const h of this.highlights) {
      const [x, y] = this.xy(h.position, g.keyOuter - 3);
      ctx.strokeStyle = nodeColour(h.to, 1, this.dark);
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(x, y, 4.5, 0, TAU);
      ctx.stroke();
    }

    if (this.path) this.drawPath(ctx, g, this.path);

    if (this.hover) {
      const [x, y] = this.xy(this.hover.position, this.hover.radius ?? g.R);
      ctx.strokeStyle = text;
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(x, y, 7, 0, TAU);
      ctx.stroke();
    }

    if (this.anim) {
      const t = now - this.anim.start;
      let running = false;
      for (const m of this.anim.moves) {
        const local = (t - m.delay) / this.anim.duration;
        if (local < 1) running = true;
        const u = Math.min(1, Math.max(0, local));
        const e = u < 0.5 ? 2 * u * u : 1 - ((-2 * u + 2) ** 2) / 2;
        const [x0, y0] = m.fromPoint === null ? [g.cx, g.cy] : this.xy(m.fromPoint, g.R);
        const [x1, y1] = m.toPoint === null ? [g.cx, g.cy] : this.xy(m.toPoint, g.R);
        const [kx, ky] = this.xy(m.position, g.R * 0.55);
        // Quadratic curve through the inside of the ring, bent towards the key.
        const x = (1 - e) ** 2 * x0 + 2 * (1 - e) * e * kx + e * e * x1;
        const y = (1 - e) ** 2 * y0 + 2 * (1 - e) * e * ky + e * e * y1;
        if (u > 0 && u < 1) {
          ctx.strokeStyle = nodeColour(m.to, 0.25, this.dark);
          ctx.lineWidth = 1;
          ctx.beginPath();
          ctx.moveTo(x0, y0);
          ctx.quadraticCurveTo(kx, ky, x1, y1);
          ctx.stroke();
        }
        if (u < 1) {
          ctx.fillStyle = nodeColour(u < 0.5 ? m.from : m.to, 1, this.dark);
          ctx.beginPath();
          ctx.arc(x, y, 4, 0, TAU);
          ctx.fill();
        }
      }
      if (running) this.requestOverlay();
      else this.anim = null;
    }
  }

  drawPath(ctx, g, path) {
    // From the key's position clockwise to its successor point.
    const r = g.R + g.band / 2 + 6;
    const a0 = this.angle(path.position);
    let a1 = this.angle(path.pointPosition);
    if (a1 < a0 || (path.wrapped && a1 <= a0)) a1 += TAU;
    const colour = nodeColour(path.node, 1, this.dark);
    ctx.strokeStyle = colour;
    ctx.lineWidth = 3;
    ctx.setLineDash([6, 4]);
    ctx.beginPath();
    ctx.arc(g.cx, g.cy, r, a0, a1);
    ctx.stroke();
    ctx.setLineDash([]);
    // Arrow head at the point.
    const ax = g.cx + Math.cos(a1) * r;
    const ay = g.cy + Math.sin(a1) * r;
    const tangent = a1 + Math.PI / 2;
    ctx.fillStyle = colour;
    ctx.beginPath();
    ctx.moveTo(ax + Math.cos(tangent) * 7, ay + Math.sin(tangent) * 7);
    ctx.lineTo(ax + Math.cos(a1) * 5, ay + Math.sin(a1) * 5);
    ctx.lineTo(ax - Math.cos(a1) * 5, ay - Math.sin(a1) * 5);
    ctx.closePath();
    ctx.fill();
    // The key itself: a ring marker with a spoke from the centre.
    const [kx, ky] = this.xy(path.position, g.R);
    ctx.strokeStyle = this.css('--text');
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.moveTo(g.cx, g.cy);
    ctx.lineTo(kx, ky);
    ctx.stroke();
    ctx.fillStyle = this.css('--panel');
    ctx.lineWidth = 2.5;
    ctx.beginPath();
    ctx.arc(kx, ky, 6, 0, TAU);
    ctx.fill();
    ctx.stroke();
  }

  /** Shows the route of a key to its owner; null clears it. */
  setPath(path) {
    this.path = path;
    this.requestOverlay();
  }

  /**
   * moves: [{key, position, from, to, fromPoint, toPoint}] with fromPoint /
   * toPoint the ring positions of the old and new successor points (null for
   * "no node"). The caller bounds the number of moves.
   */
  animateMoves(moves) {
    this.highlights = moves;
    if (!moves.length) {
      this.anim = null;
      this.requestOverlay();
      return;
    }
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    const spread = Math.min(900, moves.length * 12);
    this.anim = reduce ? null : {
      start: performance.now(),
      duration: 1400,
      moves: moves.map((m, i) => ({ ...m, delay: moves.length > 1 ? (i / (moves.length - 1)) * spread : 0 })),
    };
    this.requestOverlay();
  }

  clearHighlights() {
    this.highlights = [];
    this.requestOverlay();
  }

  // ---- hit testing ----------------------------------------------------------

  locate(e) {
    const rect = this.overlay.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const g = this.geom();
    const dx = x - g.cx;
    const dy = y - g.cy;
    const r = Math.hypot(dx, dy);
    let a = Math.atan2(dy, dx) + Math.PI / 2;
    if (a < 0) a += TAU;
    const position = Math.min(RING_SIZE - 1, Math.floor((a / TAU) * RING_SIZE));
    return { x, y, r, position, g };
  }

  /** What is under the pointer: a point, an arc, a key or a density bin. */
  hit(e) {
    const { x, y, r, position, g } = this.locate(e);
    const pxPerPos = (TAU * g.R) / RING_SIZE;
    if (Math.abs(r - g.R) <= g.band / 2 + 8 && this.points.length) {
      const idx = successorIndex(this.points, position);
      const candidates = [idx, (idx - 1 + this.points.length) % this.points.length];
      let best = null;
      for (const c of candidates) {
        const p = this.points[c];
        let d = Math.abs(p.position - position);
        d = Math.min(d, RING_SIZE - d) * pxPerPos;
        if (d <= 7 && (!best || d < best.d)) best = { d, index: c };
      }
      if (best) {
        const p = this.points[best.index];
        return { kind: 'point', x, y, position: p.position, node: p.node, index: this.pointIndexOf(best.index), radius: g.R };
      }
      const p = this.points[idx];
      const prev = this.points[(idx - 1 + this.points.length) % this.points.length];
      return { kind: 'arc', x, y, position, node: p.node, from: prev.position, to: p.position, radius: g.R };
    }
    if (r < g.keyOuter + 2 && r > g.keyOuter - g.keyDepth - 4) {
      if (this.keys && this.keys.length) {
        let best = null;
        const keyPx = (TAU * (g.keyOuter - 8)) / RING_SIZE;
        for (const k of this.keys) {
          let d = Math.abs(k.position - position);
          d = Math.min(d, RING_SIZE - d) * keyPx;
          if (d <= 6 && (!best || d < best.d)) best = { d, key: k };
        }
        if (best) {
          return { kind: 'key', x, y, key: best.key.key, position: best.key.position, node: best.key.node, radius: g.keyOuter - 3 - (best.key.position & 3) * 3.5 };
        }
      } else if (this.density) {
        const n = this.density.counts.length;
        const slice = RING_SIZE / n;
        const b = Math.min(n - 1, Math.floor(position / slice));
        return {
          kind: 'bin', x, y, position, count: this.density.counts[b],
          from: Math.floor(b * slice), to: Math.floor((b + 1) * slice) - 1, node: this.ownerOf(position), radius: g.keyOuter - 3,
        };
      }
    }
    return null;
  }

  /** Index of a ring point among its node's points (0 = the name itself). */
  pointIndexOf(i) {
    const p = this.points[i];
    if (p.index !== undefined) return p.index;
    return null;
  }

  onMove(e) {
    const h = this.hit(e);
    this.hover = h;
    const tip = this.tooltip;
    if (!h) {
      tip.hidden = true;
      this.requestOverlay();
      return;
    }
    tip.replaceChildren();
    const line = (label, value, cls) => {
      const div = document.createElement('div');
      if (cls) div.className = cls;
      div.textContent = label ? `${label}: ${value}` : value;
      tip.appendChild(div);
    };
    if (h.kind === 'point') {
      line('', `Node ${h.node}`, 't-name');
      line('position', formatInt(h.position));
      if (h.index !== null && h.index !== undefined) line('point', h.index === 0 ? `#0 (the name)` : `#${h.index}`);
      line('owner', h.node);
    } else if (h.kind === 'arc') {
      line('', `Arc of ${h.node}`, 't-name');
      line('position', formatInt(h.position));
      line('arc', `${formatInt(h.from)} → ${formatInt(h.to)}`);
      line('owner', h.node);
    } else if (h.kind === 'key') {
      line('', `Key ${h.key}`, 't-name');
      line('position', formatInt(h.position));
      line('owner', nodeLabel(h.node));
    } else if (h.kind === 'bin') {
      line('', `${formatInt(h.count)} keys`, 't-name');
      line('positions', `${formatInt(h.from)} – ${formatInt(h.to)}`);
      line('owner at the middle', nodeLabel(h.node));
    }
    tip.hidden = false;
    const g = this.geom();
    const w = tip.offsetWidth;
    tip.style.left = `${Math.min(g.s - w - 4, h.x + 14)}px`;
    tip.style.top = `${h.y + 14}px`;
    this.requestOverlay();
  }

  onClick(e) {
    const h = this.hit(e);
    this.onSelect(h, angleOf(h ? h.position : 0));
  }
}
