// The panel's page: renders the run's snapshot from the event stream and
// sends Start and Stop. Every address is relative to <base> (the ingress
// path behind Home Assistant).
'use strict';

const $ = (id) => document.getElementById(id);

const outcomeWords = {
  added: 'added', not_found: 'not found', failed: 'failed', duplicate: 'duplicate',
  skipped: 'skipped', not_shopped: 'not shopped', in_progress: 'shopping…',
};

function render(s) {
  const busy = s.state && !['idle', 'review_ready', 'failed', 'cancelled'].includes(s.state);
  $('state').textContent = s.state ? `Run ${s.run_id || ''}: ${s.state.replace('_', ' ')}` : 'No run yet.';
  $('progress').max = Math.max(1, s.progress.total || 0);
  $('progress').value = s.progress.done || 0;
  $('counts').textContent = s.progress.total
    ? `${s.progress.done} of ${s.progress.total} done — ${s.progress.added} added, ${s.progress.not_found} not found, ${s.progress.failed} failed`
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
  $('stop').disabled = !busy;
  const list = $('items');
  list.replaceChildren(...s.items.map((it) => {
    const li = document.createElement('li');
    li.dataset.outcome = it.outcome || 'in_progress';
    li.dataset.item = it.item_name;
    const name = document.createElement('div');
    name.className = 'name';
    name.textContent = it.item_name;
    const detail = document.createElement('div');
    detail.className = 'detail';
    const parts = [outcomeWords[it.outcome] || it.outcome || 'shopping…'];
    if (it.product_name) parts.push(it.product_name);
    if (it.price && it.price.Text) parts.push(it.price.Text);
    if (it.turns) parts.push(`${it.turns} turns`);
    if (it.replay) parts.push(it.replay);
    if (it.explanation) parts.push(it.explanation);
    detail.textContent = parts.join(' · ');
    li.append(name, detail);
    return li;
  }));
}

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props || {});
  e.append(...children);
  return e;
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

let shownQuestions = '';

async function act(path, body) {
  $('notice').hidden = true;
  const headers = { 'X-Gemini-Supply': '1' };
  if (body) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, { method: 'POST', headers, body });
  if (!r.ok) {
    $('notice').textContent = (await r.text()) || `${path}: ${r.status}`;
    $('notice').hidden = false;
  }
}

$('start').addEventListener('click', () => act('api/start'));
$('stop').addEventListener('click', () => act('api/stop'));

const events = new EventSource('events');
events.addEventListener('snapshot', (e) => render(JSON.parse(e.data)));
