// Account page: sign in with a token, see yourself, change your profile and email, add a
// security key. Every change reloads `me`, so what the page shows is what the gateway stored.
import { request, session } from './client';
import { errorLine, field, h, onSubmit } from './dom';
import { getFragmentData, graphql, type FragmentType } from './gql';
import { registerSecurityKey } from './webauthn';

const MeFields = graphql(`
  fragment MeFields on User {
    id
    username
    profile {
      firstName
      lastName
      displayName
      nickName
    }
    email {
      email
      isVerified
    }
    phone {
      phone
      isVerified
    }
    u2fTokens {
      id
      name
      state
    }
  }
`);

const Me = graphql(`
  query Me {
    me {
      ...MeFields
    }
  }
`);

const UpdateMyProfile = graphql(`
  mutation UpdateMyProfile($input: UpdateMyProfileInput!) {
    updateMyProfile(input: $input) {
      details {
        sequence
      }
    }
  }
`);

const SetEmail = graphql(`
  mutation SetEmail($input: SetEmailInput!) {
    setEmail(input: $input) {
      details {
        sequence
      }
    }
  }
`);

const VerifyEmail = graphql(`
  mutation VerifyEmail($input: VerifyEmailInput!) {
    verifyEmail(input: $input) {
      details {
        sequence
      }
    }
  }
`);

type Reload = (notice?: string) => Promise<void>;

export async function renderAccount(root: HTMLElement): Promise<void> {
  const reload: Reload = async (notice) => {
    const sections: Node[] = [h('h1', { textContent: 'Account' }), signInForm(reload)];
    if (notice) sections.push(h('p', { className: 'notice', role: 'status', textContent: notice }));
    if (session.token()) {
      try {
        const { me } = await request(Me, {});
        sections.push(...accountSections(me, reload));
      } catch (error) {
        sections.push(errorLine(error));
      }
    }
    root.replaceChildren(...sections);
  };
  await reload();
}

function signInForm(reload: Reload): HTMLElement {
  const token = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true });
  const form = h('form', { className: 'sign-in' }, field('Access token', token), h('button', { type: 'submit', textContent: 'Sign in' }));
  onSubmit(form, async () => {
    session.signIn(token.value.trim());
    await reload('Signed in.');
  });
  if (!session.token()) return form;
  const signOut = h('button', { type: 'button', textContent: 'Sign out' });
  signOut.addEventListener('click', () => {
    session.signOut();
    void reload('Signed out.');
  });
  return h('div', { className: 'sign-in' }, h('p', { textContent: 'Signed in with a token (kept for this tab only).' }), signOut);
}

function accountSections(meRef: FragmentType<typeof MeFields>, reload: Reload): HTMLElement[] {
  const me = getFragmentData(MeFields, meRef);
  const { profile, email, phone } = me;
  const verified = email.isVerified ? 'verified' : 'not verified';
  const keys = me.u2fTokens.map((t) =>
    h('li', { textContent: `${t.name ?? '(no name)'}: ${t.state === 'U2F_STATE_READY' ? 'ready' : 'not ready'}` }),
  );
  const summary = h(
    'section',
    { id: 'me' },
    h('h2', { textContent: 'Me' }),
    h(
      'dl',
      {},
      ...row('Name', `${profile.firstName} ${profile.lastName}`),
      ...row('Display name', profile.displayName ?? ''),
      ...row('Username', me.username),
      ...row('Email', `${email.email} (${verified})`),
      ...row('Phone', phone ? `${phone.phone} (${phone.isVerified ? 'verified' : 'not verified'})` : 'none'),
    ),
    h('h3', { textContent: 'Security keys' }),
    keys.length ? h('ul', { id: 'security-keys' }, ...keys) : h('p', { textContent: 'No security key yet.' }),
  );
  return [summary, profileForm(me, reload), emailForms(me, reload), securityKeyForm(me.id, reload)];
}

const row = (term: string, value: string) => [h('dt', { textContent: term }), h('dd', { textContent: value })];

const textInput = (name: string, value: string | null | undefined, required = false) =>
  h('input', { type: 'text', name, value: value ?? '', required });

function profileForm(
  me: { profile: { firstName: string; lastName: string; displayName?: string | null; nickName?: string | null } },
  reload: Reload,
) {
  const firstName = textInput('firstName', me.profile.firstName, true);
  const lastName = textInput('lastName', me.profile.lastName, true);
  const displayName = textInput('displayName', me.profile.displayName, true);
  const nickName = textInput('nickName', me.profile.nickName);
  const form = h(
    'form',
    { id: 'profile' },
    h('h2', { textContent: 'Profile' }),
    field('First name', firstName),
    field('Last name', lastName),
    field('Display name', displayName),
    field('Nickname', nickName),
    h('button', { type: 'submit', textContent: 'Save profile' }),
  );
  onSubmit(form, async () => {
    const input = {
      firstName: firstName.value,
      lastName: lastName.value,
      displayName: displayName.value,
      nickName: nickName.value || null,
    };
    await request(UpdateMyProfile, { input });
    await reload('Profile saved.');
  });
  return form;
}

function emailForms(me: { id: string; email: { email: string; isVerified: boolean } }, reload: Reload): HTMLElement {
  const address = h('input', { type: 'email', name: 'email', required: true });
  const change = h('form', { id: 'email' }, field('New email', address), h('button', { type: 'submit', textContent: 'Change email' }));
  onSubmit(change, async () => {
    // sendCode: the gateway mails a code to the new address; it stays unverified until then.
    await request(SetEmail, { input: { userId: me.id, email: address.value, sendCode: {} } });
    await reload(`A verification code was sent to ${address.value}.`);
  });
  const section = h('section', {}, h('h2', { textContent: 'Email' }), change);
  if (me.email.isVerified) return section;
  const code = h('input', { type: 'text', name: 'code', required: true, autocomplete: 'one-time-code' });
  const verify = h(
    'form',
    { id: 'verify-email' },
    field('Verification code', code),
    h('button', { type: 'submit', textContent: 'Verify email' }),
  );
  onSubmit(verify, async () => {
    await request(VerifyEmail, { input: { userId: me.id, verificationCode: code.value.trim() } });
    await reload('Email verified.');
  });
  section.append(verify);
  return section;
}

function securityKeyForm(userId: string, reload: Reload): HTMLElement {
  const name = textInput('tokenName', 'My security key', true);
  const form = h(
    'form',
    { id: 'security-key' },
    h('h2', { textContent: 'Add a security key' }),
    field('Key name', name),
    h('button', { type: 'submit', textContent: 'Register security key' }),
  );
  onSubmit(form, async () => {
    await registerSecurityKey(userId, name.value);
    await reload(`Security key "${name.value}" registered.`);
  });
  return form;
}
