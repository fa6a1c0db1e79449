// etcd's Auth service: 17 RPCs. Everything but Authenticate is proposed through Raft as the caller
// and decided at apply (admin gate, root protections, revision bumps). Passwords are bcrypt-hashed
// here, before anything is proposed; only the hash enters the log.
import type { PasswordVerifier } from '@ward/auth/password-jobs';
import { toPasswordHash } from '@ward/etcd/apply';
import type {
  AuthenticateRequest__Output,
  AuthUserAddRequest__Output,
  AuthUserChangePasswordRequest__Output,
  NodeStatusResponse__Output,
} from '@ward/etcd/proto';
import type { Authenticator } from '../authenticate/authenticator';
import * as requests from '@ward/etcd/api-mapping';
import type { Credentials, RequestExecutor } from '../requests/request-executor';
import { responseHeaderOf } from './response-header';

export interface AuthApiOptions {
  readonly executor: RequestExecutor;
  readonly authenticator: Authenticator;
  readonly passwords: PasswordVerifier;
  readonly status: (signal?: AbortSignal) => Promise<NodeStatusResponse__Output>;
}

type Answer = Promise<Buffer | object>;

export class AuthApi {
  constructor(private readonly options: AuthApiOptions) {}

  authEnable(_request: object, credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.authEnableOperation(), signal);
  }

  authDisable(_request: object, credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.authDisableOperation(), signal);
  }

  /** 3.7: no admin gate, but a present invalid token still fails (it is proposed like the rest). */
  authStatus(_request: object, credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.authStatusOperation(), signal);
  }

  /** Tokens on Authenticate are ignored (etcd ≥ 3.5); see authenticator.ts for the loop. */
  async authenticate(request: AuthenticateRequest__Output, _credentials: Credentials, signal?: AbortSignal): Answer {
    const outcome = await this.options.authenticator.authenticate(request.name ?? '', request.password ?? '', signal);
    if (outcome.issued.kind === 'response') return outcome.issued.bytes;
    return { header: responseHeaderOf(await this.options.status(signal)), token: outcome.issued.token };
  }

  /** etcd ≥ 3.5: hashed at the API layer (bcrypt("") for an empty password), none for no_password users. */
  async userAdd(request: AuthUserAddRequest__Output, credentials: Credentials, signal?: AbortSignal): Answer {
    const noPassword = request.options?.no_password === true;
    const passwordHash = noPassword ? null : toPasswordHash(await this.options.passwords.hash(request.password ?? ''));
    return this.options.executor.propose(credentials, requests.userAddOperation(request, passwordHash), signal);
  }

  /** etcd ≥ 3.5: an empty new password stores an empty hash (the user can no longer log in). */
  async userChangePassword(request: AuthUserChangePasswordRequest__Output, credentials: Credentials, signal?: AbortSignal): Answer {
    const password = request.password ?? '';
    const passwordHash = password === '' ? null : toPasswordHash(await this.options.passwords.hash(password));
    return this.options.executor.propose(credentials, requests.userChangePasswordOperation(request, passwordHash), signal);
  }

  userGet(request: Parameters<typeof requests.userGetOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.userGetOperation(request), signal);
  }

  userList(_request: object, credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.userListOperation(), signal);
  }

  userDelete(request: Parameters<typeof requests.userDeleteOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.userDeleteOperation(request), signal);
  }

  userGrantRole(request: Parameters<typeof requests.userGrantRoleOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.userGrantRoleOperation(request), signal);
  }

  userRevokeRole(request: Parameters<typeof requests.userRevokeRoleOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.userRevokeRoleOperation(request), signal);
  }

  roleAdd(request: Parameters<typeof requests.roleAddOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleAddOperation(request), signal);
  }

  roleGet(request: Parameters<typeof requests.roleGetOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleGetOperation(request), signal);
  }

  roleList(_request: object, credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleListOperation(), signal);
  }

  roleDelete(request: Parameters<typeof requests.roleDeleteOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleDeleteOperation(request), signal);
  }

  roleGrantPermission(request: Parameters<typeof requests.roleGrantPermissionOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleGrantPermissionOperation(request), signal);
  }

  roleRevokePermission(request: Parameters<typeof requests.roleRevokePermissionOperation>[0], credentials: Credentials, signal?: AbortSignal): Answer {
    return this.options.executor.propose(credentials, requests.roleRevokePermissionOperation(request), signal);
  }
}
