// The panel's page: renders the run's snapshot and the agents' screens from
// the event stream, sends Start (after a preview of the list), Retry failed,
// Stop and answers, and reads past runs and remembered products. Every
// address is relative to <base> (the ingress path behind Home Assistant).
'use strict';

const $ = (id) => document.getElementById(id);

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  e.append(...children.filter((c) => c !== null && c !== undefined));
  return e;
}

const outcomeWords = {
  added: 'added', not_found: 'not found', failed: 'failed', duplicate: 'duplicate',
  skipped: 'skipped', not_shopped: 'not shopped', in_progress: 'shopping…',
};

// --- requests ---------------------------------------------------------------

function showNotice(text) {
  $('notice').textContent = text;
  $('notice').hidden = !text;
}

// act sends a state-changing request, with the panel's header.
async function act(path, body) {
  showNotice('');
  const headers = { 'X-Gemini-Supply': '1' };
  if (body) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method: 'POST', headers, body });
  if (!r.ok) showNotice((await r.text()) || `${path}: ${r.status}`);
  return r.ok;
}

async function getJSON(path) {
  const r = await fetch(path, { cache: 'no-store' });
  if (!r.ok) {
    const e = new Error((await r.text()) || `${path}: ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return r.json();
}

// --- the live run -----------------------------------------------------------

let snapshot = null;
let shownQuestions = '';
const frames = new Map(); // item id → the latest frame event

function busyState(s) {
  return s && s.state && !['idle', 'review_ready', 'failed', 'cancelled'].includes(s.state);
}

function render(s) {
  if (snapshot && snapshot.run_id !== s.run_id) frames.clear(); // a new run
  snapshot = s;
  const busy = busyState(s);
  $('state').textContent = s.state ? `Run ${s.run_id || ''}: ${s.state.replace('_', ' ')}` : 'No run yet.';
  $('progress').max = Math.max(1, s.progress.total || 0);
  $('progress').value = s.progress.done || 0;
  $('counts').textContent = s.progress.total
    ? `${s.progress.done} of ${s.progress.total} done — ${s.progress.added} added, ${s.progress.not_found} not found, ${s.progress.failed} failed`
    : '';
  $('total').textContent = s.total
    ? `Estimated cart total so far: ${s.total}${s.total_unknown ? ` (+ ${s.total_unknown} without a price)` : ''}`
    : '';
  $('message').textContent = s.message || '';
  // Redraw questions only when they change, so a half-typed answer stays.
  const qs = s.questions || [];
  const key = qs.map((q) => q.id).join(',');
  if (key !== shownQuestions) {
    shownQuestions = key;
    $('question-list').replaceChildren(...qs.map(renderQuestion));
    $('questions').hidden = qs.length === 0;
  }
  $('start').disabled = busy;
  $('retry').disabled = busy;
  $('stop').disabled = !busy;
  const activity = s.activity || {};
  const asking = new Set(qs.filter((q) => q.kind === 'choice').map((q) => q.item));
  $('items').replaceChildren(...s.items.map((it) => {
    const li = el('li');
    li.dataset.outcome = it.outcome || 'in_progress';
    li.dataset.item = it.item_name;
    const parts = [outcomeWords[it.outcome] || it.outcome || 'shopping…'];
    if (it.product_name) parts.push(it.product_name);
    if (it.price && it.price.Text) parts.push(it.price.Text);
    if (it.turns) parts.push(`${it.turns} turns`);
    if (it.replay) parts.push(it.replay);
    if (it.explanation) parts.push(it.explanation);
    const a = activity[it.item_id];
    if (!it.outcome && asking.has(it.item_name)) parts.push('waiting for your answer');
    else if (!it.outcome && a && a.action) parts.push(`turn ${a.turn}: ${a.action}`);
    li.append(el('div', { className: 'name', textContent: it.item_name }), el('div', { className: 'detail', textContent: parts.join(' · ') }));
    return li;
  }));
  renderTabs();
}

// renderTabs shows the latest screen of every item still being shopped.
function renderTabs() {
  const finished = new Set((snapshot ? snapshot.items : []).filter((it) => it.outcome).map((it) => it.item_id));
  for (const id of frames.keys()) if (finished.has(id)) frames.delete(id);
  const figs = [...frames.values()].filter((f) => f.image).map((f) => {
    const img = el('img', { src: f.image, alt: `The tab shopping ${f.item}, turn ${f.turn}` });
    const cap = el('figcaption', {},
      el('span', { className: 'name', textContent: f.item }),
      el('span', { className: 'detail', textContent: ` — turn ${f.turn}: ${f.action || ''}` }),
      f.url && !(f.action || '').includes(f.url) ? el('div', { className: 'detail url', textContent: f.url }) : null);
    const fig = el('figure', {}, img, cap);
    fig.dataset.item = f.item;
    fig.dataset.turn = f.turn;
    return fig;
  });
  $('tab-list').replaceChildren(...figs);
  $('tabs').hidden = figs.length === 0;
}

function answer(id, body) {
  return act('api/answer', JSON.stringify({ id, ...body }));
}

// renderQuestion draws one waiting question with the same options as on
// Telegram: the numbered products, Nothing, Something else with a text box;
// or Allow / Deny for a safety check.
function renderQuestion(q) {
  const box = el('div', { className: 'question' });
  box.dataset.question = q.id;
  const opts = el('div', { className: 'options' });
  if (q.kind === 'confirm') {
    box.append(el('p', { textContent: `Safety check: ${q.explanation}` }), el('p', { className: 'detail', textContent: q.action }));
    opts.append(
      el('button', { type: 'button', textContent: 'Allow', onclick: () => answer(q.id, { answer: 'yes' }) }),
      el('button', { type: 'button', textContent: 'Deny', onclick: () => answer(q.id, { answer: 'no' }) }));
  } else {
    box.append(el('p', { textContent: `Which one for “${q.item}”?` }));
    if (q.context) box.append(el('p', { className: 'detail', textContent: q.context }));
    (q.options || []).forEach((o, i) => opts.append(el('button', {
      type: 'button', textContent: `${i + 1}. ${o.name}${o.price ? ' — ' + o.price : ''}`,
      onclick: () => answer(q.id, { answer: 'product', index: i }),
    })));
    opts.append(el('button', { type: 'button', textContent: 'Nothing', onclick: () => answer(q.id, { answer: 'nothing' }) }));
    const text = el('input', { type: 'text', placeholder: 'Something else…', maxLength: 200 });
    text.setAttribute('aria-label', 'Something else: what to look for instead');
    const other = el('button', { type: 'button', textContent: 'Look for this', onclick: () => answer(q.id, { answer: 'custom', text: text.value }) });
    text.addEventListener('keydown', (e) => { if (e.key === 'Enter') other.click(); });
    opts.append(text, other);
  }
  box.append(opts);
  return box;
}

// --- Start and Retry, after a preview of the list ---------------------------

let pendingStart = null; // the body of the start the preview leads to

async function startWithPreview(retry) {
  showNotice('');
  let plan;
  try {
    plan = await getJSON(retry ? 'api/preview?retry=1' : 'api/preview');
  } catch (e) {
    if (e.status === 404) { // no preview here: start at once
      act('api/start', retry ? JSON.stringify({ retry_tagged: true }) : undefined);
      return;
    }
    showNotice(e.message);
    return;
  }
  pendingStart = retry ? JSON.stringify({ retry_tagged: true }) : '';
  const n = plan.to_shop.length;
  $('preview-title').textContent = retry ? 'Retry failed items' : 'Start a run';
  $('preview-text').textContent = n ? `The run would shop ${n} ${n === 1 ? 'item' : 'items'}:` : 'Nothing to shop: the list has no open item.';
  $('preview-list').replaceChildren(...plan.to_shop.map((it) =>
    el('li', { textContent: `${it.quantity} × ${it.product}${it.tags && it.tags.length ? '  ' + it.tags.join(' ') : ''}` })));
  const skipped = [];
  if (plan.tagged.length) skipped.push(`${plan.tagged.length} tagged #404/#failed by an earlier run (Retry failed shops them)`);
  if (plan.duplicates.length) skipped.push(`${plan.duplicates.length} duplicate${plan.duplicates.length === 1 ? '' : 's'}`);
  if (plan.unnamed.length) skipped.push(`${plan.unnamed.length} with nothing to search for`);
  if (plan.completed) skipped.push(`${plan.completed} already completed`);
  $('preview-skipped').textContent = skipped.length ? `Skipped: ${skipped.join('; ')}.` : '';
  $('preview-go').disabled = n === 0;
  $('preview').hidden = false;
  (n ? $('preview-go') : $('preview-cancel')).focus();
}

$('start').addEventListener('click', () => startWithPreview(false));
$('retry').addEventListener('click', () => startWithPreview(true));
$('preview-go').addEventListener('click', async () => {
  $('preview').hidden = true;
  await act('api/start', pendingStart || undefined);
});
$('preview-cancel').addEventListener('click', () => { $('preview').hidden = true; });
$('preview').addEventListener('keydown', (e) => { if (e.key === 'Escape') $('preview-cancel').click(); });
$('stop').addEventListener('click', () => act('api/stop'));

// --- views ------------------------------------------------------------------

const views = { live: null, history: loadRuns, products: loadProducts };

function select(name) {
  for (const v of Object.keys(views)) {
    const on = v === name;
    $(`tab-${v}`).setAttribute('aria-selected', String(on));
    $(`tab-${v}`).tabIndex = on ? 0 : -1;
    $(`view-${v}`).hidden = !on;
  }
  if (views[name]) views[name]();
}

for (const name of Object.keys(views)) {
  $(`tab-${name}`).addEventListener('click', () => select(name));
}
select('live');
// Arrow keys move between the tabs (the tablist pattern).
document.querySelector('nav').addEventListener('keydown', (e) => {
  const names = Object.keys(views);
  const i = names.findIndex((n) => $(`tab-${n}`) === document.activeElement);
  if (i < 0 || (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft')) return;
  const next = names[(i + (e.key === 'ArrowRight' ? 1 : names.length - 1)) % names.length];
  select(next);
  $(`tab-${next}`).focus();
});

// --- history ----------------------------------------------------------------

const fmtTime = (t) => (t ? new Date(t).toLocaleString() : '');
const fmtCost = (u) => (u.cost_unknown ? 'cost unknown' : `$${(u.cost_usd || 0).toFixed(4)}`);
const fmtTokens = (u) => `${u.prompt_tokens || 0} in / ${u.output_tokens || 0} out tokens`;

async function loadRuns() {
  try {
    const runs = await getJSON('api/runs');
    $('runs').replaceChildren(...(runs.length ? runs.map((r) => {
      const b = el('button', { type: 'button', className: 'link', textContent: `${fmtTime(r.started_at)} — ${r.state.replace('_', ' ')}` });
      b.addEventListener('click', () => loadRun(r.id));
      const li = el('li', {}, b, el('div', { className: 'detail', textContent:
        `${r.items} items: ${r.added} added, ${r.not_found} not found, ${r.failed} failed · ${r.source || ''} · ${fmtCost(r.usage)}` }));
      li.dataset.run = r.id;
      return li;
    }) : [el('li', { className: 'detail', textContent: 'No run yet.' })]));
  } catch (e) {
    showNotice(e.message);
  }
}

async function loadRun(id) {
  let d;
  try {
    d = await getJSON(`api/runs/${encodeURIComponent(id)}`);
  } catch (e) {
    showNotice(e.message);
    return;
  }
  $('run-detail-title').textContent = `Run ${d.id}`;
  const body = [el('p', { textContent:
    `${fmtTime(d.started_at)} · ${d.state.replace('_', ' ')} · ${d.store || ''} · ${d.model || ''} · ${fmtTokens(d.usage)} · ${fmtCost(d.usage)}` })];
  if (d.error) body.push(el('p', { className: 'bad', textContent: d.error }));
  body.push(el('h3', { textContent: 'Cart review' }));
  body.push(el('ul', {}, ...(d.changes.length ? d.changes.map((c) => el('li', { textContent: c })) : [el('li', { className: 'detail', textContent: 'No change recorded.' })])));
  if (d.warnings.length) body.push(el('ul', { className: 'warnings' }, ...d.warnings.map((w) => el('li', { textContent: w }))));
  if (d.cart_url) body.push(el('p', {}, el('a', { href: d.cart_url, target: '_blank', rel: 'noopener noreferrer', textContent: 'Open the cart' })));
  body.push(el('h3', { textContent: 'Items' }));
  const items = el('ul', { className: 'list' });
  for (const it of d.items_detail) {
    const r = it.result || {};
    const li = el('li', {}, el('div', { className: 'name', textContent: `${it.quantity} × ${it.name}` }),
      el('div', { className: 'detail', textContent: [outcomeWords[r.outcome] || it.status, r.product_name, r.price && r.price.Text, r.explanation].filter(Boolean).join(' · ') }));
    li.dataset.item = it.name;
    it.attempts.forEach((a, i) => {
      const line = el('div', { className: 'detail', textContent:
        `Attempt ${i + 1}: “${a.query}” · ${a.turns} turns · ${(a.duration_ms / 1000).toFixed(1)} s · ${fmtTokens(a.usage)} · ${fmtCost(a.usage)}${a.reason ? ' · ' + a.reason : ''} ` });
      if (a.trace) {
        const b = el('button', { type: 'button', className: 'link', textContent: 'Show the trace' });
        b.addEventListener('click', () => loadTrace(d.id, a.trace, `${it.name}, attempt ${i + 1}`));
        line.append(b);
      }
      li.append(line);
    });
    items.append(li);
  }
  body.push(items);
  $('run-body').replaceChildren(...body);
  $('run-detail').hidden = false;
  $('trace').hidden = true;
  $('run-detail').scrollIntoView();
}

async function loadTrace(id, trace, title) {
  let tr;
  try {
    tr = await getJSON(`api/runs/${encodeURIComponent(id)}/traces/${encodeURIComponent(trace)}`);
  } catch (e) {
    showNotice(e.message);
    return;
  }
  const base = `api/runs/${encodeURIComponent(id)}/traces/${encodeURIComponent(trace)}/`;
  $('trace-title').textContent = `Trace: ${title}`;
  const shot = (name, alt) => (name ? el('img', { src: base + encodeURIComponent(name), alt, loading: 'lazy' }) : null);
  const body = [el('p', { className: 'detail goal', textContent: tr.goal })];
  const turns = el('ol', { className: 'turns' });
  turns.append(el('li', {}, el('div', { className: 'name', textContent: 'Start' }), el('div', { className: 'detail', textContent: tr.url || '' }), shot(tr.screenshot, 'The first screen')));
  for (const t of tr.turns) {
    turns.append(el('li', {},
      el('div', { className: 'name', textContent: `Turn ${t.turn}: ${t.actions.join(', then ') || '—'}` }),
      t.text && t.text.length ? el('div', { className: 'said', textContent: `“${t.text.join(' ')}”` }) : null,
      el('div', { className: 'detail', textContent: `model ${t.model_ms} ms · ${t.prompt_tokens} in / ${t.output_tokens} out tokens${t.url ? ' · ' + t.url : ''}` }),
      shot(t.screenshot, `The screen after turn ${t.turn}`)));
  }
  body.push(turns);
  if (tr.end) {
    body.push(el('p', { textContent: `Ended by ${tr.end.tool || tr.end.reason || 'the run'} after ${tr.end.turns} turns, ${(tr.end.duration_ms / 1000).toFixed(1)} s · ${fmtTokens(tr.end.usage)} · ${fmtCost(tr.end.usage)}${tr.end.error ? ' · ' + tr.end.error : ''}` }));
  }
  $('trace-body').replaceChildren(...body);
  $('trace').hidden = false;
  $('trace').scrollIntoView();
}

// --- remembered products ----------------------------------------------------

async function loadProducts() {
  let list;
  try {
    list = await getJSON('api/products');
  } catch (e) {
    showNotice(e.message);
    return;
  }
  $('products').replaceChildren(...(list.length ? list.map((p) => {
    const forget = el('button', { type: 'button', className: 'secondary', textContent: 'Forget' });
    forget.setAttribute('aria-label', `Forget the product for ${p.key}`);
    forget.addEventListener('click', async () => {
      if (await act('api/products/forget', JSON.stringify({ key: p.key }))) loadProducts();
    });
    const li = el('li', {}, el('div', { className: 'name', textContent: `${p.pinned ? '★ ' : ''}${p.key}` }),
      el('div', { className: 'detail', textContent: [p.name, p.size, p.price, p.times_chosen ? `chosen ${p.times_chosen}×` : '', `last ${fmtTime(p.last_seen)}`].filter(Boolean).join(' · ') }),
      forget);
    li.dataset.product = p.key;
    return li;
  }) : [el('li', { className: 'detail', textContent: 'No product is remembered yet.' })]));
}

// --- Home Assistant's theme ---------------------------------------------------

// Behind ingress the page is served from Home Assistant's own origin inside
// its frontend, so it can read the theme variables the frontend sets on its
// document (dark mode, custom themes) and follow them as they change.
// Elsewhere, or when the parent cannot be read, the system's light or dark
// preference applies (app.css).
const themeVars = {
  '--bg': '--primary-background-color', '--fg': '--primary-text-color', '--card': '--card-background-color',
  '--muted': '--secondary-text-color', '--accent': '--primary-color',
};

function followTheme() {
  let root;
  try {
    if (window.parent === window) return;
    root = window.parent.document.documentElement;
  } catch (e) {
    return; // another origin: not Home Assistant's frontend
  }
  const apply = () => {
    const css = window.parent.getComputedStyle(root);
    for (const [ours, theirs] of Object.entries(themeVars)) {
      const v = css.getPropertyValue(theirs).trim();
      if (v) document.documentElement.style.setProperty(ours, v);
      else document.documentElement.style.removeProperty(ours);
    }
  };
  apply();
  new MutationObserver(apply).observe(root, { attributes: true, attributeFilter: ['style', 'class'] });
}
followTheme();

// --- the event stream -------------------------------------------------------

const events = new EventSource('events');
events.addEventListener('snapshot', (e) => render(JSON.parse(e.data)));
events.addEventListener('frame', (e) => {
  const f = JSON.parse(e.data);
  frames.set(f.item_id, f);
  renderTabs();
});
