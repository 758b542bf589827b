/**
 * RavenAdmin: client of a relay's admin API (`/admin/v1`, CONTRACT section 6), the operations the
 * specification assigns to the dashboard, plus captured mail and the test clock.
 * Return values are the wire bodies as openapi.yaml defines them (lists keep their envelope).
 */
import { APIPromise } from './core/api-promise.js';
import { RavenError } from './core/errors.js';
import type { AdminClientOptions, RequestOptions } from './core/options.js';
import type { HttpMethod } from './core/retry.js';
import { Transport, type QueryValue } from './core/transport.js';
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];
export type Workspace = Schemas['Workspace'];
export type WorkspaceList = Schemas['WorkspaceList'];
export type Project = Schemas['Project'];
export type ProjectList = Schemas['ProjectList'];
export type Environment = Schemas['Environment'];
export type Domain = Schemas['Domain'];
export type DomainList = Schemas['DomainList'];
export type DnsRecord = Schemas['DnsRecord'];
export type Permission = Schemas['Permission'];
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyList = Schemas['ApiKeyList'];
export type ApiKeyCreated = Schemas['ApiKeyCreated'];
export type Suppression = Schemas['Suppression'];
export type SuppressionList = Schemas['SuppressionList'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointList = Schemas['WebhookEndpointList'];
export type WebhookEndpointCreated = Schemas['WebhookEndpointCreated'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookDeliveryList = Schemas['WebhookDeliveryList'];
export type Usage = Schemas['Usage'];
export type Reputation = Schemas['Reputation'];
export type ReputationWindow = Schemas['ReputationWindow'];
export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type WebhookSecretRotated = Schemas['WebhookSecretRotated'];
export type WebhookRecovery = Schemas['WebhookRecovery'];
/** `until` defaults to now on the relay clock, `dry_run` to false (the generated type marks defaulted fields required). */
export type RecoverWebhookParams = Pick<Schemas['RecoverWebhookRequest'], 'since'> & Partial<Omit<Schemas['RecoverWebhookRequest'], 'since'>>;
export type RetryEmailResult = Schemas['RetryEmailResult'];
export type ProjectDelivery = Schemas['ProjectDelivery'];
export type DeliveryAttemptList = Schemas['DeliveryAttemptList'];
export type CapturedMessageSummary = Schemas['CapturedMessageSummary'];
export type CapturedMessageList = Schemas['CapturedMessageList'];
export type CapturedMessage = Schemas['CapturedMessage'];
export type InboxEntry = Schemas['InboxEntry'];
export type MessageChecks = Schemas['MessageChecks'];
export type CheckSummary = Schemas['CheckSummary'];
export type InboxPage = Schemas['InboxPage'];
export type Clock = Schemas['Clock'];
export type CreateWorkspaceParams = Schemas['CreateWorkspaceRequest'];
export type CreateProjectParams = Schemas['CreateProjectRequest'];
export type CreateDomainParams = Schemas['CreateDomainRequest'];
/** `force` defaults to false (the generated type marks defaulted fields required). */
export type VerifyDomainParams = Partial<Schemas['VerifyDomainRequest']>;
export type CreateApiKeyParams = Schemas['CreateApiKeyRequest'];
export type CreateSuppressionParams = Schemas['CreateSuppressionRequest'];
export type CreateWebhookEndpointParams = Schemas['CreateWebhookEndpointRequest'];
export interface CapturedMessageQuery {
  /** Only messages with this envelope recipient. */
  to?: string;
  /** Only messages of this project (`prj_...`). */
  project?: string;
  limit?: number;
}
/** What `messages.wait` waits for; every given filter must hold. */
export interface WaitForMessageQuery {
  /** An envelope recipient (case-insensitive, the exact address). */
  to?: string;
  /** A case-insensitive substring of the subject. */
  subject?: string;
  /** Only messages of this project. */
  project?: string;
  /** A captured message id: only messages captured after it. */
  after?: string;
  /** Seconds to wait, 1-120 (the relay's default: 30). */
  timeout?: number;
}
export interface InboxSearchQuery {
  /** Free text and search terms (`from:`, `to:`, `subject:`, `is:unread`...), at most 500 characters. */
  q?: string;
  /** Only messages of this project. */
  project?: string;
  /** The `next_cursor` of the previous page. */
  cursor?: string;
  limit?: number;
}
/** The relay holds a wait this long past its `timeout` before the client gives up on the connection. */
const WAIT_GRACE_MS = 15_000;

interface Call {
  method: HttpMethod;
  path: string;
  body?: unknown;
  query?: Record<string, QueryValue>;
  /** POST actions that may be repeated harmlessly (activate, verify). */
  idempotent?: boolean;
  responseType?: 'json' | 'text';
  options?: RequestOptions | undefined;
}
type Send = <T>(call: Call) => APIPromise<T>;

const seg = encodeURIComponent;

export class RavenAdmin {
  readonly workspaces;
  readonly projects;
  readonly domains;
  readonly keys;
  readonly suppressions;
  readonly webhooks;
  readonly messages;
  readonly emails;
  readonly clock;
  /** The resolved base URL (argument, RAVEN_BASE_URL, or the local relay). */
  readonly baseUrl: string;
  readonly #transport: Transport;

  constructor(options: AdminClientOptions = {}) {
    const token = options.adminToken ?? process.env.RAVEN_ADMIN_TOKEN;
    if (!token) throw new RavenError('missing admin token: pass { adminToken } or set RAVEN_ADMIN_TOKEN');
    const transport = new Transport(token, options);
    this.#transport = transport;
    this.baseUrl = transport.baseUrl;
    const send: Send = <T>(call: Call) =>
      new APIPromise<T>(transport.request<T>({ ...call, path: `/admin/v1${call.path}` }));

    this.workspaces = {
      create: (params: CreateWorkspaceParams, options?: RequestOptions) =>
        send<Workspace>({ method: 'POST', path: '/workspaces', body: params, options }),
      list: (options?: RequestOptions) => send<WorkspaceList>({ method: 'GET', path: '/workspaces', options }),
      /** Activates the workspace for production; activating twice changes nothing. */
      activate: (workspaceId: string, options?: RequestOptions) =>
        send<Workspace>({ method: 'POST', path: `/workspaces/${seg(workspaceId)}/activate`, idempotent: true, options }),
    };
    this.projects = {
      create: (workspaceId: string, params: CreateProjectParams, options?: RequestOptions) =>
        send<Project>({ method: 'POST', path: `/workspaces/${seg(workspaceId)}/projects`, body: params, options }),
      list: (workspaceId: string, options?: RequestOptions) =>
        send<ProjectList>({ method: 'GET', path: `/workspaces/${seg(workspaceId)}/projects`, options }),
      delivery: (projectId: string, options?: RequestOptions) =>
        send<ProjectDelivery>({ method: 'GET', path: `/projects/${seg(projectId)}/delivery`, options }),
      /** Mail keeps being admitted and waits until resumed. */
      pauseDelivery: (projectId: string, options?: RequestOptions) =>
        send<ProjectDelivery>({ method: 'POST', path: `/projects/${seg(projectId)}/delivery/pause`, idempotent: true, options }),
      resumeDelivery: (projectId: string, options?: RequestOptions) =>
        send<ProjectDelivery>({ method: 'POST', path: `/projects/${seg(projectId)}/delivery/resume`, idempotent: true, options }),
    };
    this.domains = {
      /** Connects a domain; the answer lists the DNS records to publish. */
      create: (projectId: string, params: CreateDomainParams, options?: RequestOptions) =>
        send<Domain>({ method: 'POST', path: `/projects/${seg(projectId)}/domains`, body: params, options }),
      list: (projectId: string, options?: RequestOptions) =>
        send<DomainList>({ method: 'GET', path: `/projects/${seg(projectId)}/domains`, options }),
      /** Checks DNS; `{ force: true }` marks the domain verified without DNS (development). */
      verify: (domainId: string, params: VerifyDomainParams = {}, options?: RequestOptions) =>
        send<Domain>({
          method: 'POST',
          path: `/domains/${seg(domainId)}/verify`,
          body: params,
          idempotent: true,
          options,
        }),
    };
    this.keys = {
      /** Creates a key; `key` (the secret) appears only in this answer. */
      create: (projectId: string, params: CreateApiKeyParams, options?: RequestOptions) =>
        send<ApiKeyCreated>({ method: 'POST', path: `/projects/${seg(projectId)}/keys`, body: params, options }),
      list: (projectId: string, options?: RequestOptions) =>
        send<ApiKeyList>({ method: 'GET', path: `/projects/${seg(projectId)}/keys`, options }),
      revoke: (keyId: string, options?: RequestOptions) =>
        send<void>({ method: 'DELETE', path: `/keys/${seg(keyId)}`, options }),
    };
    this.suppressions = {
      list: (workspaceId: string, options?: RequestOptions) =>
        send<SuppressionList>({ method: 'GET', path: `/workspaces/${seg(workspaceId)}/suppressions`, options }),
      create: (workspaceId: string, params: CreateSuppressionParams, options?: RequestOptions) =>
        send<Suppression>({
          method: 'POST',
          path: `/workspaces/${seg(workspaceId)}/suppressions`,
          body: params,
          options,
        }),
      delete: (workspaceId: string, email: string, options?: RequestOptions) =>
        send<void>({ method: 'DELETE', path: `/workspaces/${seg(workspaceId)}/suppressions/${seg(email)}`, options }),
    };
    this.webhooks = {
      /** Creates an endpoint; `secret` appears only in this answer. */
      create: (projectId: string, params: CreateWebhookEndpointParams, options?: RequestOptions) =>
        send<WebhookEndpointCreated>({
          method: 'POST',
          path: `/projects/${seg(projectId)}/webhooks`,
          body: params,
          options,
        }),
      list: (projectId: string, options?: RequestOptions) =>
        send<WebhookEndpointList>({ method: 'GET', path: `/projects/${seg(projectId)}/webhooks`, options }),
      delete: (webhookId: string, options?: RequestOptions) =>
        send<void>({ method: 'DELETE', path: `/webhooks/${seg(webhookId)}`, options }),
      /**
       * A new signing secret (shown only here); the old one keeps signing beside it for
       * `overlap_seconds` (default a day, at most a week). Not retried: a repeat would rotate twice.
       */
      rotateSecret: (webhookId: string, params: { overlap_seconds?: number } = {}, options?: RequestOptions) =>
        send<WebhookSecretRotated>({ method: 'POST', path: `/webhooks/${seg(webhookId)}/rotate-secret`, body: params, options }),
      /** Nothing is sent to a disabled endpoint; its deliveries wait until it is enabled. */
      disable: (webhookId: string, options?: RequestOptions) =>
        send<Schemas['WebhookEndpointState']>({ method: 'POST', path: `/webhooks/${seg(webhookId)}/disable`, idempotent: true, options }),
      enable: (webhookId: string, options?: RequestOptions) =>
        send<Schemas['WebhookEndpointState']>({ method: 'POST', path: `/webhooks/${seg(webhookId)}/enable`, idempotent: true, options }),
      /**
       * Sends every failed delivery of the endpoint from `since` (to `until`, default now) again,
       * one more attempt each; `dry_run: true` only counts them, for a confirmation first. Only
       * the count is retried: a repeated recover could send a delivery that failed again twice.
       */
      recover: (webhookId: string, params: RecoverWebhookParams, options?: RequestOptions) =>
        send<WebhookRecovery>({
          method: 'POST',
          path: `/webhooks/${seg(webhookId)}/recover`,
          body: params,
          idempotent: params.dry_run === true,
          options,
        }),
      /** Delivery attempts of the endpoint, newest first. */
      deliveries: (webhookId: string, options?: RequestOptions) =>
        send<WebhookDeliveryList>({ method: 'GET', path: `/webhooks/${seg(webhookId)}/deliveries`, options }),
    };
    this.messages = {
      /** Mail captured by the relay's SMTP sink, newest first. */
      list: (query: CapturedMessageQuery = {}, options?: RequestOptions) =>
        send<CapturedMessageList>({
          method: 'GET',
          path: '/messages',
          query: { to: query.to, project: query.project, limit: query.limit },
          options,
        }),
      /**
       * The newest captured message that matches, at once when there is one, else the first to be
       * captured; rejects with WaitTimeoutError (408 `wait_timeout`) when none comes in time.
       */
      wait: (query: WaitForMessageQuery = {}, options?: RequestOptions) =>
        send<CapturedMessage>({
          method: 'GET',
          path: '/messages/wait',
          query: { to: query.to, subject: query.subject, project: query.project, after: query.after, timeout: query.timeout },
          options: { timeout: (query.timeout ?? 30) * 1000 + WAIT_GRACE_MS, ...options },
        }),
      get: (messageId: string, options?: RequestOptions) =>
        send<CapturedMessage>({ method: 'GET', path: `/messages/${seg(messageId)}`, options }),
      /** The raw message/rfc822 source. */
      raw: (messageId: string, options?: RequestOptions) =>
        send<string>({
          method: 'GET',
          path: `/messages/${seg(messageId)}/raw`,
          responseType: 'text',
          options: { ...options, headers: { accept: 'message/rfc822, */*', ...options?.headers } },
        }),
      /**
       * Authentication (DKIM, SPF, DMARC), headers, HTML compatibility, links and spam score of a
       * captured message; `links: false` lists the links without checking them.
       */
      checks: (messageId: string, query: { links?: boolean } = {}, options?: RequestOptions) =>
        send<MessageChecks>({
          method: 'GET',
          path: `/messages/${seg(messageId)}/checks`,
          query: { links: query.links === undefined ? undefined : query.links ? '1' : '0' },
          options,
        }),
      /** Deletes one captured message. */
      delete: (messageId: string, options?: RequestOptions) =>
        send<void>({ method: 'DELETE', path: `/messages/${seg(messageId)}`, options }),
      clear: (options?: RequestOptions) => send<void>({ method: 'DELETE', path: '/messages', options }),
      /** The inbox: search and page the captured mail, newest first, with the unread count. */
      search: (query: InboxSearchQuery = {}, options?: RequestOptions) =>
        send<InboxPage>({
          method: 'GET',
          path: '/inbox',
          query: { q: query.q, project: query.project, cursor: query.cursor, limit: query.limit },
          options,
        }),
    };
    this.emails = {
      /** Every delivery attempt of an email per recipient, oldest first, with its SMTP conversation. */
      attempts: (emailId: string, options?: RequestOptions) =>
        send<DeliveryAttemptList>({ method: 'GET', path: `/emails/${seg(emailId)}/attempts`, options }),
      /**
       * Tries the delayed recipients again now (ConflictError, 409, for any other email). Only
       * `{ confirm_unknown: true }` resends delivery_unknown recipients, which may deliver twice.
       */
      retry: (emailId: string, params: { confirm_unknown?: boolean } = {}, options?: RequestOptions) =>
        send<RetryEmailResult>({ method: 'POST', path: `/emails/${seg(emailId)}/retry`, body: params, options }),
    };
    this.clock = {
      /** Only on a relay started with --test-clock. */
      get: (options?: RequestOptions) => send<Clock>({ method: 'GET', path: '/clock', options }),
      /** Moves the test clock forward. Not retried: a repeat would advance it twice. */
      advance: (seconds: number, options?: RequestOptions) =>
        send<Clock>({ method: 'POST', path: '/clock/advance', body: { seconds }, options }),
    };
  }

  /** Bounce and complaint rates over 1, 7 and 30 days, with their review and at-risk levels. */
  reputation(workspaceId: string, options?: RequestOptions): APIPromise<Schemas['Reputation']> {
    return new APIPromise(
      this.#transport.request<Schemas['Reputation']>({ method: 'GET', path: `/admin/v1/workspaces/${seg(workspaceId)}/reputation`, options }),
    );
  }

  /** Accepted recipients this UTC month, for the workspace and each of its keys. */
  usage(workspaceId: string, options?: RequestOptions): APIPromise<Usage> {
    return new APIPromise(
      this.#transport.request<Usage>({ method: 'GET', path: `/admin/v1/workspaces/${seg(workspaceId)}/usage`, options }),
    );
  }

  /** Closes idle keep-alive connections of the client's own dispatcher. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
