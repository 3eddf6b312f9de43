// The placement form: which algorithm, its parameters and the replicas.
//
// Everything comes from the server's catalogue (GET /api/config →
// "algorithms"): names, titles, where each comes from, its parameters with
// their ranges, what it does with weights and replicas. Nothing here knows
// an algorithm by name. Applying is one PUT /api/config, a `configure`
// operation like any other change; a refusal is shown next to the field it
// is about.

import { $, el, setError } from './dom.js';
import { formatInt, humanMessage, paramLabel } from './format.js';
import { catalogueEntry } from './traits.js';

const WEIGHT_WORDS = {
  any: 'any number above 0',
  whole: 'whole numbers ≥ 1',
  no: 'not used: leave 1',
};

const REPLICA_WORDS = {
  walk: 'owner, then the next nodes clockwise',
  highest: 'the nodes with the highest scores',
  no: 'one copy only',
};

export class PlacementForm {
  /** onApply(body, form) → Promise of the API answer, or null on refusal. */
  constructor({ onApply }) {
    this.catalogue = [];
    this.config = null;
    this.dirty = false;
    this.readOnly = false;
    this.select = $('algorithm');
    this.form = $('config-form');
    this.onApply = onApply;
    this.select.addEventListener('change', () => {
      this.dirty = true;
      this.renderChoice(this.select.value, null);
      this.markDirty();
    });
    this.form.addEventListener('input', (e) => {
      if (e.target !== this.select) {
        this.dirty = true;
        this.markDirty();
      }
    });
    const more = $('algorithm-more');
    more.addEventListener('click', () => {
      const open = $('algorithm-about').classList.toggle('clamp') === false;
      more.setAttribute('aria-expanded', String(open));
      more.textContent = open ? 'less' : 'more about it';
    });
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.apply();
    });
  }

  entry(name) {
    return this.catalogue.find((a) => a.name === name) || null;
  }

  /** The configuration in force (live or past); the form follows it unless edited. */
  setConfig(config, { readOnly }) {
    if (Array.isArray(config.algorithms) && config.algorithms.length) this.catalogue = config.algorithms;
    this.config = config;
    this.readOnly = readOnly;
    if (readOnly) this.dirty = false;
    // The name alone fits the box; the title and origin are under it.
    const options = this.catalogue.map((a) => el('option', { value: a.name, title: a.title }, a.name));
    if (!this.catalogue.length) options.push(el('option', { value: config.algorithm }, config.algorithm));
    const focused = this.form.contains(document.activeElement);
    if (this.select.options.length !== options.length || [...this.select.options].some((o, i) => o.value !== options[i].value)) {
      const value = this.select.value;
      this.select.replaceChildren(...options);
      this.select.value = value || config.algorithm;
    }
    if (!this.dirty && !(focused && !readOnly && this.select.value !== config.algorithm)) {
      this.select.value = config.algorithm;
      this.renderChoice(config.algorithm, config);
    }
    this.markDirty();
  }

  /** The catalogue entry of a configuration, its variant's traits included. */
  inForce(config) {
    return catalogueEntry({ ...config, algorithms: this.catalogue });
  }

  /** Shows the chosen algorithm's description and fields. */
  renderChoice(name, config) {
    const a = this.entry(name);
    // The configuration in force speaks of its variant (nginx without
    // consistent: no replicas); another choice of the algorithm's own.
    const t = config && config.algorithm === name ? this.inForce(config) || a : a;
    const about = $('algorithm-about');
    if (t) {
      about.replaceChildren(el('strong', null, t.title), '. ', t.origin || '', t.key_hash ? ` Key hash: ${t.key_hash}.` : '');
    } else {
      about.replaceChildren();
    }
    const current = config && config.algorithm === name ? config.params || {} : {};
    const rows = (a ? a.params : []).map((p) => {
      const id = `param-${p.name}`;
      const value = current[p.name] ?? (config && name === config.algorithm && p.name === 'points_per_node' ? config.points_per_node : p.default);
      // A parameter chosen by name (twemproxy's hash) is a list of its values.
      const input = Array.isArray(p.values)
        ? el('select', { id, name: p.name, className: 'mutating', 'aria-describedby': `${id}-help ${id}-error` },
          p.values.map((v) => el('option', { value: v, selected: v === value }, v)))
        : el('input', {
          type: 'number', id, name: p.name, min: String(p.min), max: String(p.max), step: '1',
          value: String(value), className: 'mutating small-number', 'aria-describedby': `${id}-help ${id}-error`,
        });
      input.disabled = this.readOnly;
      const help = Array.isArray(p.values) ? `one of ${p.values.length} (default ${p.default})`
        : `${formatInt(p.min)}–${formatInt(p.max)} (default ${formatInt(p.default)})`;
      return el('div', { className: 'param-row' }, [
        el('label', { htmlFor: id, className: 'inline' }, paramLabel(p.name)),
        input,
        el('span', { id: `${id}-help`, className: 'muted' }, help),
        el('p', { id: `${id}-error`, className: 'error', role: 'alert' }),
      ]);
    });
    $('algorithm-params').replaceChildren(...rows);

    const replicas = $('replicas');
    const allowed = !t || t.replicas !== false;
    if (config) replicas.value = String(config.replicas ?? 1);
    else if (!allowed) replicas.value = '1';
    replicas.disabled = this.readOnly || !allowed;
    $('replicas-help').textContent = t ? (REPLICA_WORDS[t.replica_rule] || (allowed ? '' : 'one copy only')) : '';
    setError('replicas-error', '', replicas);
    setError('config-error', '');
  }

  markDirty() {
    $('config-dirty').hidden = !this.dirty || this.readOnly;
  }

  /** The weight rule of the algorithm in force, for the node form. */
  weightHelp() {
    const a = this.config ? this.inForce(this.config) : null;
    if (!a) return 'points = max(1, round(points per node × weight))';
    if (a.params.some((p) => p.name === 'points_per_node')) return `${WEIGHT_WORDS[a.weight_rule] || ''}; points = max(1, round(points per node × weight))`;
    if (a.weight_rule === 'no' || !a.weights) return `${a.name} does not use weights: leave 1`;
    return `${a.name}: ${WEIGHT_WORDS[a.weight_rule] || 'honoured'}`;
  }

  clearErrors() {
    setError('config-error', '');
    setError('replicas-error', '', $('replicas'));
    for (const input of $('algorithm-params').querySelectorAll('input, select')) setError(`${input.id}-error`, '', input);
  }

  /** Puts a refusal next to the field it names, else under the form. */
  showError(message) {
    const text = humanMessage(message);
    for (const input of $('algorithm-params').querySelectorAll('input, select')) {
      if (new RegExp(`\\b${input.name}\\b`).test(message)) {
        setError(`${input.id}-error`, text, input);
        return;
      }
    }
    if (/\breplicas?\b/.test(message)) {
      setError('replicas-error', text, $('replicas'));
      return;
    }
    setError('config-error', text);
  }

  /** The body of PUT /api/config the form describes, or null (errors shown). */
  readBody() {
    this.clearErrors();
    const name = this.select.value;
    const body = { algorithm: name };
    const params = {};
    for (const input of $('algorithm-params').querySelectorAll('select')) params[input.name] = input.value;
    for (const input of $('algorithm-params').querySelectorAll('input')) {
      if (input.validity.badInput || input.value.trim() === '') {
        setError(`${input.id}-error`, `${paramLabel(input.name)} must be a whole number.`, input);
        return null;
      }
      params[input.name] = Number.isFinite(input.valueAsNumber) ? input.valueAsNumber : input.value;
    }
    if (Object.keys(params).length) body.params = params;
    const replicas = $('replicas');
    if (!replicas.disabled) {
      if (replicas.validity.badInput || replicas.value.trim() === '') {
        setError('replicas-error', 'Replicas must be a whole number.', replicas);
        return null;
      }
      body.replicas = replicas.valueAsNumber;
    } else {
      body.replicas = 1;
    }
    return body;
  }

  /** The choice on the form was applied elsewhere (a preview's Apply): nothing is pending. */
  applied() {
    this.dirty = false;
    this.markDirty();
  }

  async apply() {
    const body = this.readBody();
    if (!body) return null;
    const answer = await this.onApply(body, this);
    if (answer) {
      this.dirty = false;
      this.markDirty();
    }
    return answer;
  }
}
