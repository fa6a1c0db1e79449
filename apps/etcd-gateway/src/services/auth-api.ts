// etcd's Auth service: 17 RPCs. Everything but Authenticate is proposed through Raft as the caller
// and decided at apply (admin gate, root protections, revision bumps). Passwords are bcrypt-hashed
// here, before anything is proposed; only the hash enters the log. Requests arrive with their string
// fields as the bytes the client sent (auth-fields.ts): passwords stay bytes, names must be UTF-8.
import type { PasswordVerifier } from '@ward/auth/password-jobs';
import { toPasswordHash } from '@ward/etcd/apply';
import type {
  AuthenticateRequest__Output,
  AuthRoleAddRequest__Output,
  AuthRoleDeleteRequest__Output,
  AuthRoleGetRequest__Output,
  AuthRoleGrantPermissionRequest__Output,
  AuthRoleRevokePermissionRequest__Output,
  AuthUserAddRequest__Output,
  AuthUserChangePasswordRequest__Output,
  AuthUserDeleteRequest__Output,
  AuthUserGetRequest__Output,
  AuthUserGrantRoleRequest__Output,
  AuthUserRevokeRoleRequest__Output,
  NodeStatusResponse__Output,
} from '@ward/etcd/proto';
import { wireError } from '@ward/etcd/wire-errors';
import type { Authenticator } from '@ward/etcd/authenticate';
import * as requests from '@ward/etcd/api-mapping';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { nameOrUndefined, nameText, passwordBytes, type WireText, type WithWireText } from './auth-fields';
import { responseHeaderOf } from './response-header';
import { abortSignalOf, type Cancellation } from '@ward/platform/grpc-server';

export interface AuthApiOptions {
  readonly executor: RequestExecutor;
  /** etcd's rule in the gateway, or a token-service doing it. */
  readonly authenticator: Pick<Authenticator, 'authenticate'>;
  readonly passwords: PasswordVerifier;
  readonly status: (signal?: Cancellation) => Promise<NodeStatusResponse__Output>;
}

type Answer = Promise<Buffer | object>;

export class AuthApi {
  constructor(private readonly options: AuthApiOptions) {}

  authEnable(_request: object, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.authEnableOperation(), signal);
  }

  authDisable(_request: object, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.authDisableOperation(), signal);
  }

  /** 3.7: no admin gate, but a present invalid token still fails (it is proposed like the rest). */
  authStatus(_request: object, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.authStatusOperation(), signal);
  }

  /**
   * Tokens on Authenticate are ignored (etcd ≥ 3.5); see authenticator.ts for the loop. A name that
   * is not UTF-8 cannot belong to a user (ward refuses such names), so it gets etcd's answer for an
   * unknown user.
   */
  async authenticate(request: WithWireText<AuthenticateRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const name = nameOrUndefined(request.name);
    if (name === undefined) throw wireError('AuthFailed');
    const password = passwordBytes(request.password);
    try {
      const outcome = await this.options.authenticator.authenticate(name, password, abortSignalOf(signal), credentials.address ?? '');
      if (outcome.issued.kind === 'response') return outcome.issued.bytes;
      return { header: responseHeaderOf(await this.options.status(signal)), token: outcome.issued.token };
    } finally {
      password.fill(0);
    }
  }

  /** etcd ≥ 3.5: hashed at the API layer (bcrypt("") for an empty password), none for no_password users. */
  async userAdd(request: WithWireText<AuthUserAddRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const name = nameText(request.name, 'user');
    const noPassword = request.options?.no_password === true;
    const passwordHash = noPassword ? null : toPasswordHash(await this.hashPassword(request.password));
    return this.options.executor.propose(credentials, requests.userAddOperation({ name, password: '', options: request.options }, passwordHash), signal);
  }

  /** etcd ≥ 3.5: an empty new password stores an empty hash (the user can no longer log in). */
  async userChangePassword(request: WithWireText<AuthUserChangePasswordRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const name = nameText(request.name, 'user');
    const empty = request.password === null || request.password === undefined || request.password.length === 0;
    const passwordHash = empty ? null : toPasswordHash(await this.hashPassword(request.password));
    return this.options.executor.propose(credentials, requests.userChangePasswordOperation({ name, password: '' }, passwordHash), signal);
  }

  userGet(request: WithWireText<AuthUserGetRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.userGetOperation({ name: nameText(request.name, 'user') }), signal);
  }

  userList(_request: object, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.userListOperation(), signal);
  }

  userDelete(request: WithWireText<AuthUserDeleteRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.userDeleteOperation({ name: nameText(request.name, 'user') }), signal);
  }

  userGrantRole(request: WithWireText<AuthUserGrantRoleRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const operation = requests.userGrantRoleOperation({ user: nameText(request.user, 'user'), role: nameText(request.role, 'role') });
    return this.options.executor.propose(credentials, operation, signal);
  }

  userRevokeRole(request: WithWireText<AuthUserRevokeRoleRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const operation = requests.userRevokeRoleOperation({ name: nameText(request.name, 'user'), role: nameText(request.role, 'role') });
    return this.options.executor.propose(credentials, operation, signal);
  }

  roleAdd(request: WithWireText<AuthRoleAddRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.roleAddOperation({ name: nameText(request.name, 'role') }), signal);
  }

  roleGet(request: WithWireText<AuthRoleGetRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.roleGetOperation({ role: nameText(request.role, 'role') }), signal);
  }

  roleList(_request: object, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.roleListOperation(), signal);
  }

  roleDelete(request: WithWireText<AuthRoleDeleteRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    return this.options.executor.propose(credentials, requests.roleDeleteOperation({ role: nameText(request.role, 'role') }), signal);
  }

  roleGrantPermission(request: WithWireText<AuthRoleGrantPermissionRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const operation = requests.roleGrantPermissionOperation({ name: nameText(request.name, 'role'), perm: request.perm });
    return this.options.executor.propose(credentials, operation, signal);
  }

  roleRevokePermission(request: WithWireText<AuthRoleRevokePermissionRequest__Output>, credentials: Credentials, signal?: Cancellation): Answer {
    const operation = requests.roleRevokePermissionOperation({ role: nameText(request.role, 'role'), key: request.key, range_end: request.range_end });
    return this.options.executor.propose(credentials, operation, signal);
  }

  /** bcrypt of the password's exact bytes; the copy handed to the tier is zeroed afterwards. */
  private async hashPassword(value: WireText): Promise<Uint8Array> {
    const password = passwordBytes(value);
    try {
      return await this.options.passwords.hash(password);
    } finally {
      password.fill(0);
    }
  }
}
