// The developer portal: a small script over the service's own routes, with the session cookie (and its
// CSRF token on every change). Everything it shows that came from the service is set as text, never HTML.

const $ = (id) => document.getElementById(id);
const APPLICATIONS = '/admin/developer/applications';
let csrfToken = '';
/** The signed-in developer's Discord ID (digits). */
let me = '';

/** A problem the service answered with: its reason, safe to show. */
class ServiceError extends Error {
  constructor(status, body) {
    super(body?.extra?.[0]?.reason ?? body?.cause ?? `The service answered ${status}.`);
    this.status = status;
    this.name = body?.extra?.[0]?.name ?? 'ERROR';
  }
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // Discord IDs are 64-bit: an owner is kept as its digits, never as a (rounded) number.
  const text = (await response.text()).replace(/"owner":(\d+)/g, '"owner":"$1"');
  const parsed = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new ServiceError(response.status, parsed);
  return parsed;
}

function notify(message, kind = 'info') {
  const notice = $('notice');
  notice.textContent = message;
  notice.className = `notice ${kind}`;
  notice.hidden = false;
}

/** Runs an action from a button: the button is busy meanwhile, and a failure is said, not thrown. */
async function act(button, work) {
  button.disabled = true;
  try {
    await work();
  } catch (error) {
    // An answer of the service is said as it is; anything else is a bug of this page, told to the console.
    if (!(error instanceof ServiceError)) console.error(error);
    notify(error instanceof ServiceError ? error.message : 'Something went wrong; try again.', 'error');
  } finally {
    button.disabled = false;
  }
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else if (name === 'onclick') node.addEventListener('click', value);
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const day = (iso) => new Date(iso).toLocaleString();

async function copy(input, button) {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    button.textContent = 'Copied';
  } catch {
    button.textContent = 'Selected: press Ctrl+C';
  }
  setTimeout(() => {
    button.textContent = 'Copy';
  }, 3000);
}

function showKey(key) {
  $('key-value').value = key;
  $('key-origin').textContent = location.origin;
  $('key-panel').hidden = false;
  $('key-panel').focus();
}

function keyLine(key) {
  if (!key) return undefined;
  let text;
  if (key.state === 'uncollected') text = 'Key: ready to collect (shown once).';
  else if (key.state === 'active') {
    const used = key.last_used_at ? `last used ${day(key.last_used_at)}` : 'not used yet';
    text = `Key: active since ${day(key.collected_at)}, ${used}.`;
  } else text = `Key: ended ${day(key.ended_at)} (${String(key.ended_reason).replace('_', ' ')}).`;
  return element('p', { class: 'key-line', text });
}

function historyOf(application) {
  const list = element('ol', { class: 'history' });
  for (const entry of application.history) {
    const who =
      entry.actor === 'operator'
        ? 'an operator'
        : entry.actor === application.owner
          ? 'you'
          : `reviewer ${entry.actor}`;
    list.append(
      element('li', {
        text: `${day(entry.at)}: ${entry.from ? `${entry.from} → ` : ''}${entry.to}, by ${who}${entry.reason ? `: “${entry.reason}”` : ''}`,
      }),
    );
  }
  return element('details', {}, element('summary', { text: 'History' }), list);
}

function ownActions(application) {
  const actions = element('div', { class: 'actions' });
  const base = `${APPLICATIONS}/${application.id}`;
  const button = (label, onClick, secondary = false) => {
    const node = element('button', {
      type: 'button',
      text: label,
      ...(secondary ? { class: 'secondary' } : {}),
    });
    node.addEventListener('click', () => act(node, onClick));
    return node;
  };
  if (application.currentState === 'pending') {
    actions.append(
      button(
        'Withdraw',
        async () => {
          if (!confirm(`Withdraw “${application.name}”? This cannot be undone.`)) return;
          await api('POST', `${base}/withdraw`, {});
          notify('The application is withdrawn.');
          await loadApplications();
        },
        true,
      ),
    );
  }
  if (application.currentState === 'approved') {
    const key = application.key;
    if (key?.state === 'uncollected') {
      actions.append(
        button('Collect key', async () => {
          const collected = await api('POST', `${base}/key`);
          await loadApplications();
          showKey(collected.key);
        }),
      );
    } else {
      actions.append(
        button(key?.state === 'active' ? 'Rotate key' : 'Make a new key', async () => {
          if (
            key?.state === 'active' &&
            !confirm('Rotating ends the current key and every token made from it. Continue?')
          )
            return;
          const rotated = await api('POST', `${base}/key/rotate`);
          await loadApplications();
          showKey(rotated.key);
        }),
      );
      if (key?.state === 'active') {
        actions.append(
          button(
            'Revoke key',
            async () => {
              if (!confirm('Revoking ends the key and every token made from it. Continue?')) return;
              await api('POST', `${base}/key/revoke`);
              notify(
                'The key is revoked: tokens made from it no longer work. Make a new key when you need one.',
              );
              await loadApplications();
            },
            true,
          ),
        );
      }
    }
  }
  return actions;
}

function applicationCard(application, actions) {
  const titleId = `app-${application.id}`;
  return element(
    'li',
    { class: 'card app', 'aria-labelledby': titleId },
    element(
      'h3',
      { id: titleId },
      element('span', { text: application.name }),
      element('span', { class: `state state-${application.currentState}`, text: application.currentState }),
    ),
    application.description
      ? element('p', { class: 'description', text: application.description })
      : undefined,
    element('p', {
      class: 'muted',
      text: `Grants: ${application.grants.join(', ')} · applied ${day(application.applied_at)}`,
    }),
    keyLine(application.key),
    actions,
    application.history ? historyOf(application) : undefined,
  );
}

async function loadApplications() {
  const page = await api('GET', `${APPLICATIONS}?limit=100&owner=${me}`);
  const details = await Promise.all(
    page.data.map((application) => api('GET', `${APPLICATIONS}/${application.id}`)),
  );
  const list = $('apps');
  list.replaceChildren(
    ...details.map((application) => applicationCard(application, ownActions(application))),
  );
  $('apps-empty').hidden = details.length > 0;
}

async function loadPending() {
  const page = await api('GET', `${APPLICATIONS}?state=pending&limit=100`);
  const list = $('pending');
  list.replaceChildren(
    ...page.data.map((application) => {
      const reasonId = `reason-${application.id}`;
      const reason = element('textarea', { id: reasonId, rows: '2', maxlength: '500' });
      const decide = (action, label, secondary) => {
        const node = element('button', {
          type: 'button',
          text: label,
          ...(secondary ? { class: 'secondary' } : {}),
        });
        node.addEventListener('click', () =>
          act(node, async () => {
            await api(
              'POST',
              `${APPLICATIONS}/${application.id}/${action}`,
              reason.value ? { reason: reason.value } : {},
            );
            notify(`“${application.name}” is ${action === 'approve' ? 'approved' : 'rejected'}.`);
            await Promise.all([loadPending(), loadApplications()]);
          }),
        );
        return node;
      };
      const actions = element(
        'div',
        { class: 'actions' },
        element('label', { for: reasonId, text: 'Reason (optional, kept in its history)' }),
        reason,
        decide('approve', 'Approve'),
        decide('reject', 'Reject', true),
      );
      const card = applicationCard(application, actions);
      card.insertBefore(element('p', { class: 'muted', text: `Applicant: ${application.owner}` }), actions);
      return card;
    }),
  );
  $('review-empty').hidden = page.data.length > 0;
}

async function loadUsage() {
  const me = await api('GET', '/auth/me');
  $('usage-requests').textContent = String(me.usage_today.requests);
  $('usage-upstream').textContent = me.upstream
    ? `${me.usage_today.upstream_lookups} lookups (${me.upstream.remaining} of ${me.upstream.limit} left this window)`
    : `${me.usage_today.upstream_lookups} lookups`;
  $('usage-refused').textContent = String(me.usage_today.refused);
  $('usage-note').textContent =
    `Today (UTC ${me.usage_today.day}); counted every few seconds. Work budget: ${me.budget.remaining} of ${me.budget.limit} units left this window.`;
}

async function loadGrants() {
  const grants = await api('GET', '/portal/grants.json');
  $('grants').replaceChildren(
    ...grants.map(({ grant, opens }) => {
      const id = `grant-${grant.replace(':', '-')}`;
      return element(
        'div',
        { class: 'grant' },
        element('input', {
          type: 'checkbox',
          id,
          name: 'grants',
          value: grant,
          'aria-describedby': `${id}-what`,
        }),
        element('label', { for: id }, element('code', { text: grant })),
        element('p', { id: `${id}-what`, class: 'muted', text: opens }),
      );
    }),
  );
}

function wireForms() {
  $('apply').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const submit = form.querySelector('button[type="submit"]');
    act(submit, async () => {
      const name = $('apply-name').value.trim();
      const grants = [...form.querySelectorAll('input[name="grants"]:checked')].map((box) => box.value);
      if (!name) {
        notify('Give your bot or site a name.', 'error');
        $('apply-name').focus();
        return;
      }
      if (grants.length === 0) {
        notify('Choose at least one grant.', 'error');
        return;
      }
      await api('POST', APPLICATIONS, { name, description: $('apply-description').value, grants });
      form.reset();
      notify('Applied: a reviewer will approve or reject it. Come back here to collect your key.');
      await loadApplications();
    });
  });
  $('key-copy').addEventListener('click', () => copy($('key-value'), $('key-copy')));
  $('key-done').addEventListener('click', () => {
    $('key-value').value = '';
    $('key-panel').hidden = true;
  });
  $('identity').addEventListener('click', () =>
    act($('identity'), async () => {
      const pair = await api('POST', '/auth/session/token');
      $('identity-value').value = pair.token;
      $('identity-out').hidden = false;
      $('identity-value').focus();
    }),
  );
  $('identity-copy').addEventListener('click', () => copy($('identity-value'), $('identity-copy')));
  $('sign-out').addEventListener('click', () =>
    act($('sign-out'), async () => {
      await api('POST', '/auth/logout');
      location.assign('/portal/');
    }),
  );
}

async function start() {
  const query = new URLSearchParams(location.search);
  if (query.get('sign_in') === 'denied') notify('Sign-in was cancelled on Discord.', 'error');
  const session = await api('GET', '/auth/session');
  if (!session.signed_in) {
    $('sign-in').href = `/auth/discord/login?return_to=${encodeURIComponent('/portal/')}`;
    $('signed-out').hidden = false;
    document.body.dataset.ready = 'true';
    return;
  }
  csrfToken = session.csrf_token;
  me = session.owner;
  $('who-name').textContent = session.global_name
    ? `${session.global_name} (@${session.username})`
    : `@${session.username}`;
  $('who').hidden = false;
  $('signed-in').hidden = false;
  $('review').hidden = !session.reviewer;
  wireForms();
  await Promise.all([
    loadGrants(),
    loadApplications(),
    loadUsage(),
    session.reviewer ? loadPending() : undefined,
  ]);
  document.body.dataset.ready = 'true';
}

start().catch((error) => {
  if (!(error instanceof ServiceError)) console.error(error);
  notify(
    error instanceof ServiceError ? error.message : 'The portal could not load; reload the page.',
    'error',
  );
  document.body.dataset.ready = 'true';
});
