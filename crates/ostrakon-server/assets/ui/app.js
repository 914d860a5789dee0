// Ostrakon's timeline page: an entity's facts per predicate over valid time, as known at a
// chosen batch, drawn as SVG from POST /graphql answers. No dependencies, no build step.
// `document.body.dataset.state` is `loading` while requests run, then `ready` or `error`.
'use strict';

const TOKEN_KEY = 'ostrakon.token'; // shared with the GraphiQL page
const SAMPLES = 40; // points of the retention curve
const PAGE = 100; // facts per request
const DAY = 864e5;

const VALUE = 'type entity { id name } string integer float boolean time';
const FIND = `query Find($ns: String!, $name: String) {
  entities(namespace: $ns, name: $name, first: 50) { basis { seq } nodes { id name aliases kind } }
}`;
const LIST = `query List($ns: String!) {
  entities(namespace: $ns, first: 200) { basis { seq } nodes { id name aliases kind } }
}`;
const BY_ID = `query ById($ns: String!, $id: ID!) {
  entity(namespace: $ns, id: $id) { id name aliases kind }
  entities(namespace: $ns, first: 1) { basis { seq } }
}`;
const TIMELINE = `query Timeline($ns: String!, $id: ID!, $seq: Int, $valid: DateTime, $after: String,
                                  $lanes: Boolean!) {
  timeline(namespace: $ns, entity: { id: $id }, validAt: $valid, knownAtSeq: $seq) @include(if: $lanes) {
    entity { halfLife recalledAt }
    lanes { predicate held { valid { from to } factIds value { ${VALUE} } } }
  }
  facts(namespace: $ns, subject: { id: $id }, includeAll: true, validAt: $valid, knownAtSeq: $seq,
        first: ${PAGE}, after: $after) {
    basis { seq systemTime validAt clock }
    pageInfo { hasNextPage endCursor }
    nodes {
      id predicate polarity object { ${VALUE} } valid { from to } effective { from to }
      status reason supersededBy { id object { ${VALUE} } } contradicts { id }
      confidence corroborations assertedSeq assertedAt retractedSeq correction importance tiers
      provenance { id text occurredAt source role thread }
    }
  }
}`;
const BASIS = `query Basis($ns: String!, $seq: Int, $valid: DateTime) {
  entities(namespace: $ns, first: 1, knownAtSeq: $seq, validAt: $valid) { basis { seq systemTime validAt clock } }
}`;

const state = {
  ns: '', entity: null, matches: [], latest: 0, seq: 0, valid: '',
  basis: null, facts: [], lanes: [], trace: null, note: '', selected: null, generation: 0,
};

const $ = (selector) => document.querySelector(selector);

/** Builds an element: `attrs` are attributes (functions under `on…` are listeners). */
function make(ns, tag, attrs = {}, ...children) {
  const el = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (value != null && value !== false) el.setAttribute(key, value === true ? '' : value);
  }
  el.append(...children.flat().filter((c) => c != null && c !== false));
  return el;
}
const h = (...args) => make(null, ...args);
const s = (...args) => make('http://www.w3.org/2000/svg', ...args);

// --- talking to the server -------------------------------------------------------------

class RequestError extends Error {
  constructor(errors) {
    super(errors.map((e) => e.message).join('; '));
    this.errors = errors;
  }
  has(code) { return this.errors.some((e) => e.extensions?.code === code); }
}

function readToken() {
  try { return localStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}
function writeToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
  } catch { /* storage disabled: the token lasts as long as the page */ }
}

async function gql(query, variables) {
  const headers = { 'Content-Type': 'application/json' };
  const token = $('#token').value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  let response;
  try {
    response = await fetch('/graphql', { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  } catch (e) {
    throw new RequestError([{ message: `cannot reach the server: ${e.message}`, extensions: { code: 'NETWORK' } }]);
  }
  const http = (what) =>
    new RequestError([{ message: `HTTP ${response.status}: ${what}`, extensions: { code: 'HTTP' } }]);
  let body;
  try {
    body = await response.json();
  } catch {
    throw http('the answer is not JSON');
  }
  if (body.errors?.length) throw new RequestError(body.errors);
  if (!body.data) throw http('no data');
  return body.data;
}

// --- values and times --------------------------------------------------------------------

const ms = (time) => (time == null ? null : Date.parse(time.replace(/(\.\d{3})\d+/, '$1')));

function label(value) {
  if (!value) return '?';
  switch (value.type) {
    case 'ENTITY': return value.entity?.name ?? '?';
    case 'STRING': return value.string;
    case 'INTEGER': return String(value.integer);
    case 'FLOAT': return String(value.float);
    case 'BOOLEAN': return String(value.boolean);
    case 'TIME': return when(value.time);
    default: return '?';
  }
}

/** A time for people: the date alone at midnight UTC, else date and time in UTC. */
function when(time) {
  if (time == null) return '…';
  const iso = new Date(typeof time === 'number' ? time : ms(time)).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}
const interval = (i) => `[${when(i.from)}, ${i.to == null ? '∞' : when(i.to)})`;
const factText = (f) => `${f.polarity === 'NEGATED' ? 'not ' : ''}${label(f.object)}`;

function utc(year, month = 0, day = 1) {
  const d = new Date(0);
  d.setUTCFullYear(year, month, day);
  return d.getTime();
}

/** Axis ticks between t0 and t1: about a dozen, on whole days, months or years. */
function ticks(t0, t1) {
  const YEAR = 365.25 * DAY;
  const steps = [[1, 'd', DAY], [7, 'd', DAY], [1, 'm', YEAR / 12], [3, 'm', YEAR / 12], [6, 'm', YEAR / 12],
    ...[1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].map((n) => [n, 'y', YEAR])];
  const [n, unit] = steps.find(([k, , size]) => (t1 - t0) / (k * size) <= 12) ?? steps.at(-1);
  const start = new Date(t0);
  const out = [];
  for (let i = 0; out.length < 40; i++) {
    let t;
    if (unit === 'y') t = utc(Math.floor(start.getUTCFullYear() / n) * n + i * n);
    else if (unit === 'm') t = utc(start.getUTCFullYear(), Math.floor(start.getUTCMonth() / n) * n + i * n);
    else t = Math.floor(t0 / DAY) * DAY + i * n * DAY;
    if (t > t1) break;
    if (t >= t0) out.push({ t, text: new Date(t).toISOString().slice(0, unit === 'y' ? 4 : unit === 'm' ? 7 : 10) });
  }
  return out;
}

// --- state of the page ---------------------------------------------------------------------

function busy() { document.body.dataset.state = 'loading'; }
function ready() { if (document.body.dataset.state !== 'error') document.body.dataset.state = 'ready'; }

function showError(err) {
  const errors = err instanceof RequestError ? err.errors : [{ message: String(err?.message ?? err) }];
  // Fields that fail for one reason (a bad argument shared by two fields) say it once.
  const lines = [...new Map(errors.map((e) => [`${e.extensions?.code}\n${e.message}`, e])).values()];
  $('#error').replaceChildren(
    ...lines.map((e) => h('div', {}, h('code', {}, e.extensions?.code ?? 'ERROR'), e.message)));
  $('#error').hidden = false;
  document.body.dataset.state = 'error';
}
function clearError() {
  $('#error').replaceChildren();
  $('#error').hidden = true;
}

function updateUrl() {
  const params = new URLSearchParams({ ns: state.ns });
  if (state.entity) {
    params.set('entity', state.entity.name);
    if (state.matches[0]?.id !== state.entity.id) params.set('id', state.entity.id);
  } else if ($('#entity').value.trim()) {
    params.set('entity', $('#entity').value.trim());
  }
  if (state.seq && state.seq < state.latest) params.set('seq', state.seq);
  if (state.valid) params.set('valid', state.valid);
  history.replaceState(null, '', `?${params}`);
}

/** Finds the entity named in the form (exactly, else by part of a name) and loads it. */
async function load(options) {
  try {
    await find(options);
  } catch (err) {
    // What is on screen belonged to the previous entity: clear it, say why.
    state.entity = null;
    state.matches = [];
    renderMatches();
    clearChart('');
    showError(err);
  }
}

async function find({ id = null, seq = 0 } = {}) {
  clearError();
  state.ns = $('#ns').value.trim();
  const name = $('#entity').value.trim();
  writeToken($('#token').value.trim());
  if (!state.ns || (!name && !id)) throw new Error('give a namespace and an entity');
  busy();
  let matches, latest;
  if (id) {
    const data = await gql(BY_ID, { ns: state.ns, id });
    matches = data.entity ? [data.entity] : [];
    latest = data.entities.basis.seq;
  } else {
    const exact = await gql(FIND, { ns: state.ns, name });
    ({ nodes: matches, basis: { seq: latest } } = exact.entities);
    if (!matches.length) {
      // Names match whole (case and spacing aside); for part of one, look through a page.
      const needle = name.toLowerCase();
      const all = await gql(LIST, { ns: state.ns });
      matches = all.entities.nodes.filter((e) => [e.name, ...e.aliases].some((n) => n.toLowerCase().includes(needle)));
    }
  }
  state.matches = matches;
  state.latest = latest;
  if (!matches.length) {
    state.entity = null;
    renderMatches();
    clearChart(latest ? `No entity ${id ? `with id ${id}` : `named “${name}”`} in namespace “${state.ns}”.`
      : `Namespace “${state.ns}” holds nothing yet.`);
    updateUrl();
    return ready();
  }
  state.seq = seq;
  await select(matches[0]);
}

async function select(entity) {
  state.entity = entity;
  state.selected = null;
  $('#entity').value = entity.name;
  renderMatches();
  const known = $('#known');
  known.max = Math.max(1, state.latest);
  state.seq = Math.min(Math.max(state.seq || state.latest, 1), state.latest);
  known.value = state.seq;
  known.disabled = false;
  await refresh();
}

/** Reads the entity at (valid, seq) and redraws; a newer call makes an older one moot. */
async function refresh() {
  if (!state.entity) return;
  const generation = ++state.generation;
  const current = () => generation === state.generation;
  clearError();
  busy();
  const vars = { ns: state.ns, id: state.entity.id, seq: state.seq, valid: state.valid || null };
  try {
    let facts = [], lanes = [], trace = null, basis = null, note = '', after = null;
    try {
      do {
        const data = await gql(TIMELINE, { ...vars, after, lanes: after == null });
        if (data.timeline) ({ lanes, entity: trace } = data.timeline);
        basis = data.facts.basis;
        facts.push(...data.facts.nodes);
        after = data.facts.pageInfo.hasNextPage ? data.facts.pageInfo.endCursor : null;
      } while (after != null && current());
    } catch (err) {
      // Before the batch that made the entity, it is unknown: an empty picture, not an error.
      if (!(err instanceof RequestError && err.has('UNKNOWN_ENTITY') && state.seq < state.latest)) throw err;
      basis = (await gql(BASIS, vars)).entities.basis;
      facts = [];
      note = `${state.entity.name} is not known yet at seq ${state.seq}.`;
    }
    if (!current()) return;
    Object.assign(state, { facts, lanes, trace, basis, note });
    draw();
    await drawRetention(generation);
    if (!current()) return;
    updateUrl();
    ready();
  } catch (err) {
    if (current()) showError(err);
  }
}

// --- drawing -----------------------------------------------------------------------------

const GEOMETRY = { left: 130, right: 18, axis: 26, row: 22, bar: 15, head: 12, gap: 10 };
let scale = null; // the chart's time ↔ x mapping, for the cursor

function clearChart(note) {
  Object.assign(state, { facts: [], lanes: [], trace: null, basis: null, note, selected: null });
  $('#lanes').replaceChildren();
  $('#note').textContent = note;
  $('#in-force').replaceChildren();
  $('#in-force-empty').hidden = true;
  $('#known-label').textContent = 'no entity loaded';
  $('#known').disabled = true;
  $('#retention').replaceChildren(s('polyline', { points: '' }));
  $('#retention-info').textContent = '';
  renderDetails();
}

function renderMatches() {
  $('#matches').replaceChildren(...state.matches.map((e) =>
    h('button', {
      type: 'button', 'data-entity-id': e.id, 'aria-current': String(state.entity?.id === e.id),
      title: e.aliases.length ? `also: ${e.aliases.join(', ')}` : null,
      onclick: () => { state.seq = 0; select(e); },
    }, e.name, e.kind ? h('span', { class: 'kind' }, ` (${e.kind})`) : null, ` #${e.id}`)));
}

function draw() {
  const { basis, facts } = state;
  const validAt = ms(basis.validAt), now = ms(basis.clock);
  $('#known-label').textContent = `as known at seq ${basis.seq} of ${state.latest}`
    + ` (system time ${when(basis.systemTime)})${basis.seq === state.latest ? ', the latest' : ''}`;
  const marks = new Set(facts.flatMap((f) => [f.assertedSeq, f.retractedSeq]).filter((n) => n != null));
  $('#known-marks').replaceChildren(...[...marks].sort((a, b) => a - b).map((n) => h('option', { value: n })));

  // Lanes in the timeline's order, then predicates whose every fact is out of force.
  const order = [...new Set([...state.lanes.map((l) => l.predicate), ...facts.map((f) => f.predicate).sort()])];
  const byPredicate = (p) => facts.filter((f) => f.predicate === p)
    .sort((a, b) => ms(a.valid.from) - ms(b.valid.from) || a.id - b.id);

  // The axis spans every interval end, now and the cursor, with a margin.
  const ends = facts.flatMap((f) => [f.valid, ...f.effective]).flatMap((i) => [ms(i.from), ms(i.to)]);
  const times = [now, validAt, ...ends].filter((t) => t != null && Number.isFinite(t));
  let t0 = Math.min(...times), t1 = Math.max(...times);
  if (t1 - t0 < DAY) { t0 -= 180 * DAY; t1 += 180 * DAY; }
  const margin = (t1 - t0) * 0.05;
  t0 -= margin; t1 += margin;
  const width = Math.max(640, $('#chart').clientWidth);
  const G = GEOMETRY, plot = width - G.left - G.right;
  const x = (t) => G.left + ((Math.min(Math.max(t ?? t1, t0), t1) - t0) / (t1 - t0)) * plot;
  scale = { x, t: (px) => t0 + ((px - G.left) / plot) * (t1 - t0) };

  const grid = s('g', { class: 'axis' });
  const body = s('g');
  let y = G.axis;
  for (const predicate of order) {
    const lane = byPredicate(predicate);
    const rowOf = packRows(lane, x);
    const rows = lane.length ? Math.max(...rowOf.values()) + 1 : 1;
    const top = y, rowsTop = top + G.head;
    const height = G.head + rows * G.row + G.gap;
    const g = s('g', { 'data-lane': predicate },
      s('line', { class: 'lane-sep', x1: 0, x2: width, y1: top + height, y2: top + height }),
      s('text', { class: 'lane-label', x: 8, y: rowsTop + G.row / 2 + 4 }, predicate));
    const held = state.lanes.find((l) => l.predicate === predicate)?.held ?? [];
    for (const stretch of held) {
      g.append(s('rect', {
        class: 'held', 'data-held': stretch.factIds.join(' '), x: x(ms(stretch.valid.from)), y: top + 3,
        width: Math.max(1, x(ms(stretch.valid.to)) - x(ms(stretch.valid.from))), height: 4,
      }, s('title', {}, `${label(stretch.value)} ${interval(stretch.valid)}`)));
    }
    lane.forEach((f) => {
      const rowY = rowsTop + rowOf.get(f.id) * G.row + (G.row - G.bar) / 2;
      const selected = state.selected === f.id ? ' selected' : '';
      const status = `s-${f.status}`;
      const d0 = x(ms(f.valid.from)), d1 = x(ms(f.valid.to));
      g.append(s('rect', {
        class: `declared ${status}${selected}`, 'data-declared': f.id, 'data-status': f.status,
        x: d0, y: rowY, width: Math.max(2, d1 - d0), height: G.bar, rx: 2,
      }, s('title', {}, `${predicate}: ${factText(f)} declared ${interval(f.valid)} — ${f.reason}`)));
      if (!f.effective.length) {
        // In force nowhere: the outline carries the label.
        g.append(s('text', { class: 'declared-label', x: d0 + 4, y: rowY + G.bar - 4 },
          `${factText(f)} (${f.status.toLowerCase().replaceAll('_', ' ')})`));
      }
      for (const part of f.effective) {
        const x0 = x(ms(part.from)), x1 = x(ms(part.to)), text = factText(f);
        const inside = x1 - x0 > textWidth(text);
        // A stretch is where the fact was in force: it is coloured as what it was then,
        // never by its status at the cursor (a fact negated in 2021 was current in 2015);
        // the cursor's status is in `data-status` and the details panel.
        const then = 's-CURRENT';
        g.append(s('g', {
          class: `bar${f.polarity === 'NEGATED' ? ' negated' : ''}${selected}`, 'data-fact': f.id,
          'data-status': f.status, 'data-value': label(f.object), 'data-polarity': f.polarity,
        },
        s('rect', { class: then, x: x0, y: rowY, width: Math.max(2, x1 - x0), height: G.bar, rx: 2 }),
        // An open end: an arrowhead at the right edge.
        part.to == null ? s('path', { class: then, d: `M${x1 - 1} ${rowY} l6 ${G.bar / 2} l-6 ${G.bar / 2}z` })
          : null,
        s('text', { x: inside ? x0 + 4 : x1 + 8, y: rowY + G.bar - 4 }, text),
        s('title', {}, `${predicate}: ${text} in force ${interval(part)} — ${f.status}: ${f.reason}`)));
      }
      // Supersession and corrections: a dotted link to the fact that won.
      const winner = f.supersededBy && rowOf.get(f.supersededBy.id);
      if (winner != null) {
        const stops = f.effective.map((p) => ms(p.to)).filter((t) => t != null);
        const other = lane.find((o) => o.id === f.supersededBy.id);
        const at = x(stops.length ? Math.max(...stops) : ms(other.effective[0]?.from ?? other.valid.from));
        const y1 = rowY + G.bar / 2, y2 = rowsTop + winner * G.row + G.row / 2;
        g.append(s('path', { class: 'link', d: `M${at} ${y1} V${y2} h6` }));
      }
    });
    body.append(g);
    y += height;
  }
  const total = y + 4;
  for (const tick of ticks(t0, t1)) {
    grid.append(s('line', { class: 'grid', x1: x(tick.t), x2: x(tick.t), y1: G.axis - 4, y2: total }),
      s('text', { x: x(tick.t) + 3, y: 16 }, tick.text));
  }
  const svg = $('#lanes');
  svg.setAttribute('viewBox', `0 0 ${width} ${total}`);
  svg.setAttribute('preserveAspectRatio', 'xMinYMin meet');
  svg.setAttribute('height', total);
  svg.replaceChildren(
    s('rect', { class: 'axis-band', x: G.left, y: 0, width: plot, height: G.axis - 4 }),
    s('rect', { class: 'scrub', x: G.left, y: G.axis - 4, width: plot, height: total - G.axis }),
    grid,
    s('line', { class: 'now', x1: x(now), x2: x(now), y1: G.axis - 4, y2: total }),
    s('text', { x: x(now) + 3, y: total - 4, class: 'now-label' }, 'now'),
    body,
    s('g', { id: 'cursor' }));
  $('#note').textContent = state.note
    || (order.length ? '' : `${state.entity.name} has no facts as known at seq ${basis.seq}.`);
  drawCursor(validAt);
  renderInForce();
  renderDetails();
}

const textWidth = (text) => text.length * 6.5 + 8;

/** Rows of a lane: each fact goes in the first row where its outline and labels fit. */
function packRows(lane, x) {
  const ends = [];
  const rowOf = new Map();
  for (const f of lane) {
    const x0 = x(ms(f.valid.from)), text = factText(f);
    let end = Math.max(x(ms(f.valid.to)), f.effective.length ? 0 : x0 + textWidth(`${text} (${f.status})`));
    for (const part of f.effective) {
      const p0 = x(ms(part.from)), p1 = x(ms(part.to));
      end = Math.max(end, p1 - p0 > textWidth(text) ? p1 : p1 + 8 + textWidth(text));
    }
    let row = ends.findIndex((e) => e + 4 <= x0);
    if (row < 0) row = ends.push(0) - 1;
    ends[row] = end;
    rowOf.set(f.id, row);
  }
  return rowOf;
}

function drawCursor(t) {
  const cursor = $('#cursor');
  if (!cursor || !scale) return;
  const total = Number($('#lanes').getAttribute('height'));
  const px = scale.x(t), text = `T = ${when(t)}`;
  const w = text.length * 7 + 8;
  const left = px + w > $('#lanes').viewBox.baseVal.width ? px - w : px;
  cursor.replaceChildren(
    s('line', { class: 'cursor', x1: px, x2: px, y1: 0, y2: total }),
    s('rect', { class: 'cursor-pill', x: left, y: 2, width: w, height: GEOMETRY.axis - 8, rx: 3 }),
    s('text', { class: 'cursor-label', x: left + 4, y: GEOMETRY.axis - 10 }, text));
}

function renderInForce() {
  const T = ms(state.basis.validAt);
  const inForce = state.facts.filter((f) => f.status === 'CURRENT');
  $('#in-force-title').textContent = `In force at ${when(T)}, as known at seq ${state.basis.seq}`;
  $('#in-force').replaceChildren(...inForce.map((f) => {
    const since = f.effective.find((p) => ms(p.from) <= T)?.from ?? f.valid.from;
    return h('li', { 'data-in-force': f.id, 'data-value': label(f.object) },
      h('span', { class: 'pred' }, `${f.predicate}: `), factText(f),
      h('span', { class: 'hint' }, ` (fact ${f.id}, since ${when(since)})`));
  }));
  $('#in-force-empty').hidden = inForce.length > 0 || !!state.note;
}

function renderDetails() {
  const panel = $('#details');
  const f = state.facts.find((fact) => fact.id === state.selected);
  if (!f) {
    panel.replaceChildren(h('h2', {}, 'Fact'),
      h('p', { class: 'hint' }, 'Click a bar for its reason, confidence and provenance.'));
    return;
  }
  const row = (term, ...value) => [h('dt', {}, term), h('dd', {}, ...value)];
  panel.replaceChildren(
    h('h2', {}, `${f.predicate}: ${factText(f)} `, h('span', { class: 'hint' }, `fact ${f.id}`)),
    h('dl', { 'data-detail-fact': f.id },
      row('status', h('span', { class: `pill s-${f.status}`, 'data-status': f.status }, f.status),
        ` at ${when(state.basis.validAt)}`),
      row('reason', h('span', { class: 'reason' }, f.reason)),
      row('declared', interval(f.valid)),
      row('in force', f.effective.length ? f.effective.map(interval).join(', ') : 'nowhere'),
      row('context tier', h('span', { class: 'tier' }, f.tiers.length ? f.tiers.join(', ') : 'ARCHIVE'),
        ` as known at seq ${state.basis.seq}`),
      row('confidence', h('span', { class: 'confidence' }, String(f.confidence))),
      row('corroborations', h('span', { class: 'corroborations' }, String(f.corroborations))),
      row('recorded', `seq ${f.assertedSeq}, ${when(f.assertedAt)}`),
      f.retractedSeq != null ? row('retracted', `seq ${f.retractedSeq}`) : null,
      f.supersededBy ? row('superseded by', `fact ${f.supersededBy.id} (${label(f.supersededBy.object)})`) : null,
      f.contradicts.length ? row('contradicts', f.contradicts.map((c) => `fact ${c.id}`).join(', ')) : null,
      f.correction ? row('correction', 'the user corrected the agent') : null,
      f.importance != null ? row('importance', String(f.importance)) : null,
      row('provenance', f.provenance.length
        ? h('ol', { class: 'provenance' }, f.provenance.map((e) => h('li', { 'data-episode': e.id },
          h('blockquote', {}, e.text),
          h('span', { class: 'hint' },
            [when(e.occurredAt), e.role, e.source, e.thread && `thread ${e.thread}`, `episode ${e.id}`]
              .filter(Boolean).join(' · ')))))
        : 'no episode')));
}

/** The entity's retention from its trace's start (its first source episode) on. */
async function drawRetention(generation) {
  const svg = $('#retention');
  const sources = state.facts.flatMap((f) => f.provenance.map((e) => ms(e.occurredAt)));
  const starts = sources.length ? sources : state.facts.map((f) => ms(f.assertedAt));
  if (!starts.length) {
    svg.replaceChildren(s('polyline', { points: '' }));
    $('#retention-info').textContent = state.note || 'No trace to show.';
    return;
  }
  const start = Math.min(...starts), now = ms(state.basis.clock);
  // From the start to now, cut where the curve has long been flat (eight half-lives on).
  const recalls = state.trace?.recalledAt.map(ms) ?? [];
  const halfLife = (state.trace?.halfLife ?? (30 * DAY) / 1000) * 1000;
  const end = Math.max(start + DAY, Math.min(now, Math.max(start, ...recalls) + 8 * halfLife));
  // Evenly spaced samples, and both sides of each recall (the curve jumps there).
  const jumps = recalls.filter((t) => t > start && t <= end).slice(-20).flatMap((t) => [t - 1000, t]);
  const at = [...Array.from({ length: SAMPLES }, (_, i) => start + ((end - start) * i) / (SAMPLES - 1)), ...jumps]
    .sort((a, b) => a - b);
  const samples = at.map((t, i) => `r${i}: retention(at: ${JSON.stringify(new Date(t).toISOString())})`).join(' ');
  const data = await gql(`query Retention($ns: String!, $id: ID!, $seq: Int) {
    namespace(name: $ns) { decay { entity { model threshold } } }
    entity(namespace: $ns, id: $id, knownAtSeq: $seq) {
      strength halfLife recallCount dormant retention ${samples}
    }
  }`, { ns: state.ns, id: state.entity.id, seq: state.seq });
  if (generation !== state.generation || !data.entity) return;
  const e = data.entity, profile = data.namespace.decay.entity;
  const W = 800, H = 140, L = 34, R = 10, T = 10, B = 22;
  const px = (t) => L + ((t - start) / (end - start)) * (W - L - R);
  const py = (r) => T + (1 - r) * (H - T - B);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren(
    s('line', { class: 'axis', x1: L, x2: W - R, y1: py(0), y2: py(0) }),
    s('line', { class: 'axis', x1: L, x2: L, y1: py(1), y2: py(0) }),
    s('text', { x: 4, y: py(1) + 4 }, '1'), s('text', { x: 4, y: py(0) + 4 }, '0'),
    s('line', { class: 'threshold', x1: L, x2: W - R, y1: py(profile.threshold), y2: py(profile.threshold) },
      s('title', {}, `dormant below ${profile.threshold}`)),
    s('text', { x: W - R, y: py(profile.threshold) - 3, 'text-anchor': 'end' }, `dormant below ${profile.threshold}`),
    now <= end ? s('line', { class: 'now', x1: px(now), x2: px(now), y1: py(1), y2: py(0) }) : null,
    s('text', { x: L, y: H - 6 }, when(start)),
    s('text', { x: W - R, y: H - 6, 'text-anchor': 'end' }, now <= end ? `${when(end)} (now)` : when(end)),
    ...recalls.filter((t) => t <= end).map((t) => s('circle', { class: 'recall', cx: px(t), cy: py(1), r: 3 })),
    s('polyline', { points: at.map((t, i) => `${px(t).toFixed(1)},${py(e[`r${i}`]).toFixed(1)}`).join(' ') }));
  const days = e.halfLife == null ? 'none' : `${(e.halfLife / 86400).toFixed(1)} days`;
  $('#retention-info').textContent = `${profile.model}: strength ${e.strength.toFixed(2)}, half-life ${days}, `
    + `recalled ${e.recallCount} times; retention now ${e.retention.toFixed(3)}${e.dormant ? ' (dormant)' : ''}.`
    + ' Salience only: it never changes what is true.';
}

// --- wiring --------------------------------------------------------------------------------

// A refresh soon: the page says `loading` from now, so no one reads what is about to change.
let pending = null;
function later(delay) {
  clearTimeout(pending);
  if (state.entity) busy();
  pending = setTimeout(refresh, delay);
}

function setValid(text) {
  state.valid = text;
  $('#valid').value = text;
}

function wire() {
  $('#controls').addEventListener('submit', (event) => {
    event.preventDefault();
    load();
  });
  $('#token').addEventListener('change', () => writeToken($('#token').value.trim()));
  $('#known').addEventListener('input', () => {
    state.seq = Number($('#known').value);
    $('#known-label').textContent = `as known at seq ${state.seq} of ${state.latest} …`;
    later(150);
  });
  $('#known').addEventListener('change', () => {
    state.seq = Number($('#known').value);
    later(0);
  });
  $('#valid-form').addEventListener('submit', (event) => {
    event.preventDefault();
    setValid($('#valid').value.trim());
    later(0);
  });
  $('#valid').addEventListener('change', () => {
    setValid($('#valid').value.trim());
    later(0);
  });

  // The chart: a bar opens its fact; elsewhere a click or a drag moves the cursor.
  const svg = $('#lanes');
  let dragging = false;
  const pointAt = (event) => {
    const box = svg.getBoundingClientRect();
    const px = ((event.clientX - box.left) / box.width) * svg.viewBox.baseVal.width;
    if (px < GEOMETRY.left) return null;
    const day = new Date(scale.t(px)).toISOString().slice(0, 10);
    setValid(day);
    drawCursor(ms(`${day}T00:00:00Z`));
    return day;
  };
  svg.addEventListener('click', (event) => {
    const bar = event.target.closest('[data-fact], [data-declared]');
    if (!bar) return;
    state.selected = bar.dataset.fact ?? bar.dataset.declared;
    svg.querySelectorAll('.selected').forEach((el) => el.classList.remove('selected'));
    svg.querySelectorAll(`[data-fact="${state.selected}"], [data-declared="${state.selected}"]`)
      .forEach((el) => el.classList.add('selected'));
    renderDetails();
  });
  svg.addEventListener('pointerdown', (event) => {
    if (event.target.closest('[data-fact], [data-declared]') || !scale || pointAt(event) == null) return;
    dragging = true;
    svg.setPointerCapture(event.pointerId);
  });
  svg.addEventListener('pointermove', (event) => { if (dragging) pointAt(event); });
  const stop = () => {
    if (!dragging) return;
    dragging = false;
    later(0);
  };
  svg.addEventListener('pointerup', stop);
  svg.addEventListener('pointercancel', stop);

  // Redraw when the chart's width changes (a window resized, a scrollbar appearing).
  let width = 0;
  new ResizeObserver(() => {
    const seen = $('#chart').clientWidth;
    if (seen !== width && state.basis) draw();
    width = seen;
  }).observe($('#chart'));
  window.addEventListener('error', (event) => showError(event.error ?? event.message));
  window.addEventListener('unhandledrejection', (event) => showError(event.reason));
}

function start() {
  wire();
  const params = new URLSearchParams(location.search);
  $('#ns').value = params.get('ns') ?? '';
  $('#entity').value = params.get('entity') ?? '';
  $('#token').value = readToken();
  setValid(params.get('valid') ?? '');
  const id = params.get('id');
  if ($('#ns').value && ($('#entity').value || id)) {
    load({ id, seq: Number(params.get('seq')) || 0 });
  } else {
    document.body.dataset.state = 'ready';
  }
}

start();
