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

async function act(path) {
  $('notice').hidden = true;
  const r = await fetch(path, { method: 'POST', headers: { 'X-Gemini-Supply': '1' } });
  if (!r.ok) {
    $('notice').textContent = (await r.text()) || `${path}: ${r.status}`;
    $('notice').hidden = false;
  }
}

$('start').addEventListener('click', () => act('api/start'));
$('stop').addEventListener('click', () => act('api/stop'));

const events = new EventSource('events');
events.addEventListener('snapshot', (e) => render(JSON.parse(e.data)));
