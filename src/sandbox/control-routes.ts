import type { FastifyInstance } from 'fastify';
import { isIpAllowed } from './access.js';
import {
  behaviourBody,
  busyBody,
  duplicateBody,
  faultsBody,
  idParams,
  releaseBody,
  stockBody,
  webhookConfigBody,
} from './control-schemas.js';
import type { SandboxControl } from './control-service.js';
import type { SandboxState } from './state.js';
import type { BehaviourSettings, FaultSettings } from './types.js';
import { busyView, callView, catalogView, confirmationView, rejectedConfirmView, reservationView, webhookView } from './views.js';
import type { ReleaseOrder, WebhookDispatcher, WebhookSettings } from './webhook-dispatcher.js';

/**
 * The control and inspection API, under CONTROL_PREFIX: outside any provider path, so it can
 * never shadow or be mistaken for one. It needs no provider auth and is therefore refused to any
 * address outside `controlAllowedIps` (loopback by default).
 */

export const CONTROL_PREFIX = '/_sandbox';

export interface ControlRoutesOptions {
  control: SandboxControl;
  state: SandboxState;
  webhooks: WebhookDispatcher;
  controlAllowedIps: readonly string[] | 'any';
}

type IdRequest = { Params: { id: string } };

export async function controlRoutes(app: FastifyInstance, opts: ControlRoutesOptions): Promise<void> {
  const { control, state, webhooks } = opts;
  const p = CONTROL_PREFIX;

  app.addHook('onRequest', async (request, reply) => {
    if (opts.controlAllowedIps !== 'any' && !isIpAllowed(request.ip, opts.controlAllowedIps)) {
      return reply.code(403).send({ error: 'control API is reachable from allowed addresses only' });
    }
  });

  // Actions without options (release, duplicate, reset…) may be POSTed with no body at all.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined) request.body = {};
  });

  app.get(`${p}/health`, async () => ({ ok: true }));

  app.get(`${p}/faults`, async () => control.getFaults());
  app.put<{ Body: Partial<FaultSettings> }>(`${p}/faults`, { schema: { body: faultsBody } }, async (req) => control.setFaults(req.body ?? {}));
  app.delete(`${p}/faults`, async () => control.setFaults({}));

  app.get(`${p}/behaviour`, async () => control.getBehaviour());
  app.put<{ Body: Partial<BehaviourSettings> }>(`${p}/behaviour`, { schema: { body: behaviourBody } }, async (req) => control.setBehaviour(req.body ?? {}));

  app.post(`${p}/tokens/expire`, async () => ({ expired: control.expireTokens() }));

  app.get(`${p}/busy`, async () => busyView(state.busy));
  app.post<{ Body: { active: boolean; reason?: string; until?: string; mode?: 'reject' | 'delay'; delayMs?: number } }>(
    `${p}/busy`,
    { schema: { body: busyBody } },
    async (req) => {
      const { active, reason, until, mode, delayMs } = req.body;
      control.setBusy(active, { reason, until: until === undefined ? undefined : Date.parse(until), mode, delayMs });
      return busyView(state.busy);
    },
  );

  app.get(`${p}/catalog`, async () => ({ vendors: catalogView(state) }));
  app.put<IdRequest & { Body: { stock: number } }>(`${p}/stock/:id`, { schema: { params: idParams, body: stockBody } }, async (req, reply) => {
    if (!control.setStock(req.params.id, req.body.stock)) return reply.code(404).send({ error: 'unknown card_id' });
    return { card_id: req.params.id, stock: req.body.stock };
  });

  app.get<{ Querystring: { status?: string; transaction_number?: string } }>(`${p}/reservations`, async (req) => {
    control.sweep();
    const { status, transaction_number: number } = req.query;
    const list = [...state.reservations.values()].filter(
      (r) => (status === undefined || r.status === status) && (number === undefined || String(r.transactionNumber) === number),
    );
    return { reservations: list.map(reservationView) };
  });
  for (const status of ['cancelled', 'expired'] as const) {
    const verb = status === 'cancelled' ? 'cancel' : 'expire';
    app.post<IdRequest>(`${p}/reservations/:id/${verb}`, { schema: { params: idParams } }, async (req, reply) => {
      const ended = control.endReservation(req.params.id, status);
      if (!ended) return reply.code(409).send({ error: 'no pending reservation with this transaction_id' });
      return reservationView(ended);
    });
  }

  app.get(`${p}/confirmations`, async () => {
    const counts: Record<string, number> = {};
    for (const c of state.confirmations) counts[c.transactionId] = (counts[c.transactionId] ?? 0) + 1;
    return {
      confirmations: state.confirmations.map(confirmationView),
      successful_confirms_by_transaction: counts,
      rejected: state.rejectedConfirms.map(rejectedConfirmView),
    };
  });

  app.get<{ Querystring: { endpoint?: string; since?: string } }>(`${p}/calls`, async (req) => {
    const since = req.query.since === undefined ? 0 : Number(req.query.since);
    const list = state.calls.filter((c) => (req.query.endpoint === undefined || c.endpoint === req.query.endpoint) && c.seq > since);
    return { calls: list.map(callView) };
  });
  app.delete(`${p}/calls`, async () => {
    state.calls.length = 0;
    return { ok: true };
  });

  app.get(`${p}/webhooks`, async () => ({ settings: webhooks.view(), events: webhooks.list().map(webhookView) }));
  app.put<{ Body: Partial<WebhookSettings> }>(`${p}/webhooks/config`, { schema: { body: webhookConfigBody } }, async (req, reply) => {
    try {
      return control.configureWebhooks(req.body ?? {});
    } catch (err) {
      // A bad secret or a URL without one is the caller's mistake, not the sandbox's.
      return reply.code(400).send({ error: err instanceof Error ? err.message : 'invalid webhook settings' });
    }
  });
  app.post<IdRequest>(`${p}/webhooks/:id/redeliver`, { schema: { params: idParams } }, async (req, reply) => {
    if (!control.redeliverWebhook(req.params.id)) return reply.code(404).send({ error: 'unknown event or no webhook URL' });
    return { redelivered: req.params.id };
  });
  app.post<IdRequest & { Body: { count?: number } }>(
    `${p}/webhooks/:id/duplicate`,
    { schema: { params: idParams, body: duplicateBody } },
    async (req, reply) => {
      const count = req.body?.count ?? 2;
      if (!control.duplicateWebhook(req.params.id, count)) return reply.code(404).send({ error: 'unknown event or no webhook URL' });
      return { duplicated: req.params.id, count };
    },
  );
  app.post<{ Body: { order?: ReleaseOrder } }>(`${p}/webhooks/release`, { schema: { body: releaseBody } }, async (req) => ({
    released: await control.releaseWebhooks(req.body?.order ?? 'fifo'),
  }));

  app.post(`${p}/reset`, async () => {
    control.reset();
    return { ok: true };
  });
}
