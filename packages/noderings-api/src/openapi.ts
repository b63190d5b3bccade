import { PinSetSchema } from "@nodekit/version-pins";
import * as z from "zod";
import {
  AgentListSchema,
  AgentSchema,
  ApiErrorBodySchema,
  CompleteInboundPeeringRequestSchema,
  CreateAgentRequestSchema,
  CreateHealthReportRequestSchema,
  HealthReportSchema,
  HealthSchema,
  IDEMPOTENCY_KEY_HEADER,
  InboundPeeringSchema,
  OffloadingTargetsSchema,
  OutboundPeeringSchema,
  PeeringParametersSchema,
  PeeringStatusSchema,
  PeeringTeardownSchema,
  ReportOffloadingRequestSchema,
  RequestInboundPeeringRequestSchema,
  StartOutboundPeeringRequestSchema,
  TeardownPeeringRequestSchema,
} from "./schemas.ts";

/** The API version this package describes; the OpenAPI document's `info.version`. */
export const API_VERSION = "v1";

const components: Record<string, { schema: z.ZodType; io: "input" | "output" }> = {
  CreateAgentRequest: { schema: CreateAgentRequestSchema, io: "input" },
  Agent: { schema: AgentSchema, io: "output" },
  AgentList: { schema: AgentListSchema, io: "output" },
  PinSet: { schema: PinSetSchema, io: "output" },
  PeeringParameters: { schema: PeeringParametersSchema, io: "output" },
  StartOutboundPeeringRequest: { schema: StartOutboundPeeringRequestSchema, io: "input" },
  OutboundPeering: { schema: OutboundPeeringSchema, io: "output" },
  RequestInboundPeeringRequest: { schema: RequestInboundPeeringRequestSchema, io: "input" },
  InboundPeering: { schema: InboundPeeringSchema, io: "output" },
  CompleteInboundPeeringRequest: { schema: CompleteInboundPeeringRequestSchema, io: "input" },
  PeeringStatus: { schema: PeeringStatusSchema, io: "output" },
  TeardownPeeringRequest: { schema: TeardownPeeringRequestSchema, io: "input" },
  PeeringTeardown: { schema: PeeringTeardownSchema, io: "output" },
  OffloadingTargets: { schema: OffloadingTargetsSchema, io: "output" },
  ReportOffloadingRequest: { schema: ReportOffloadingRequestSchema, io: "input" },
  CreateHealthReportRequest: { schema: CreateHealthReportRequestSchema, io: "input" },
  HealthReport: { schema: HealthReportSchema, io: "output" },
  Health: { schema: HealthSchema, io: "output" },
  Error: { schema: ApiErrorBodySchema, io: "output" },
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ "application/json": { schema: ref(name) } });
const DESCRIPTIONS: Record<number, string> = {
  400: "Bad request: a malformed body or query parameter",
  401: "No valid API token",
  404: "No such agent in this account",
  409: "Conflicts with current state (a name taken, a peering step out of order, an Idempotency-Key still in use)",
  415: "The body is not application/json",
  422: "Invalid: details name each offending field; also a reserved agent name, or an Idempotency-Key reused with another body",
  429: "Rate limited: retry after the Retry-After seconds",
  500: "The service failed",
  503: "The service is unavailable: retry after the Retry-After seconds",
};
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [String(code), { description: DESCRIPTIONS[code], content: json("Error") }]));
const common = [401, 429, 500, 503];
const agentId = { name: "id", in: "path", required: true, schema: { type: "string", format: "uuid" } };
const idempotencyKey = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: "header",
  required: false,
  description:
    "Any unique string (a UUID). A repeated request with the same key is answered with the first answer and not carried out again; the same key with another body is 422; while the first is still being processed, 409.",
  schema: { type: "string", maxLength: 255 },
};

function operation(
  id: string,
  summary: string,
  response: [number, string],
  options: { body?: string; errors?: number[]; params?: object[] } = {},
) {
  return {
    operationId: id,
    summary,
    ...(options.params === undefined ? {} : { parameters: options.params }),
    ...(options.body === undefined ? {} : { requestBody: { required: true, content: json(options.body) } }),
    responses: {
      [String(response[0])]: { description: summary, content: json(response[1]) },
      ...errors(...common, ...(options.errors ?? [])),
    },
  };
}

/** A change to one agent with a JSON body (a peering step, the offloading report): 400, 404, 409, 415 and 422 besides the common errors. */
const agentChange = (id: string, summary: string, response: [number, string], body: string, params: object[] = []) =>
  operation(id, summary, response, { params: [agentId, ...params], body, errors: [400, 404, 409, 415, 422] });

/** The OpenAPI 3.1 document of the NodeRings API, built from the zod schemas (served at `GET /api/docs`). */
export function buildOpenApiDocument(options: { serverUrl?: string } = {}): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  for (const [name, { schema, io }] of Object.entries(components)) {
    const { $schema: _ignored, ...jsonSchema } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    schemas[name] = jsonSchema;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "NodeRings API",
      version: API_VERSION,
      description:
        "Agents, platform pins, Liqo peering, offloading targets and health reports for NodeRings providers. Every request under /api/v1 needs `Authorization: Bearer <API token>`. Every error answers with the Error body.",
    },
    ...(options.serverUrl === undefined ? {} : { servers: [{ url: options.serverUrl }] }),
    components: {
      schemas,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "The account's API token" } },
    },
    security: [{ bearer: [] }],
    paths: {
      "/healthz": {
        get: {
          operationId: "healthz",
          security: [],
          responses: { "200": { description: "Serving", content: json("Health") } },
        },
      },
      "/api/docs": {
        get: { operationId: "openapi", security: [], responses: { "200": { description: "This document" } } },
      },
      "/api/v1/agents": {
        post: operation("createAgent", "Create an agent", [201, "Agent"], {
          body: "CreateAgentRequest",
          errors: [400, 409, 415, 422],
          params: [idempotencyKey],
        }),
        get: operation("listAgents", "The account's agents; `name=` gives the one with that name", [200, "AgentList"], {
          params: [{ name: "name", in: "query", schema: { type: "string" } }],
        }),
      },
      "/api/v1/agents/{id}": {
        get: operation("getAgent", "One agent", [200, "Agent"], { params: [agentId], errors: [404] }),
        delete: operation(
          "deleteAgent",
          "Deregister an agent (its peering torn down first); answers it as it was",
          [200, "Agent"],
          {
            params: [agentId],
            errors: [404, 409],
          },
        ),
      },
      "/api/v1/pins": {
        get: operation("getPins", "The platform-validated pin set for an architecture", [200, "PinSet"], {
          params: [
            { name: "arch", in: "query", required: true, schema: { type: "string", enum: ["amd64", "arm64", "arm"] } },
          ],
          errors: [400, 422],
        }),
      },
      "/api/v1/agents/{id}/peering/parameters": {
        get: operation(
          "getPeeringParameters",
          "What the agent's liqoctl needs before peering",
          [200, "PeeringParameters"],
          { params: [agentId], errors: [404] },
        ),
      },
      "/api/v1/agents/{id}/peering/outbound": {
        post: agentChange(
          "startOutboundPeering",
          "Start outbound peering: issues a one-time peering user",
          [201, "OutboundPeering"],
          "StartOutboundPeeringRequest",
          [idempotencyKey],
        ),
      },
      "/api/v1/agents/{id}/peering/inbound": {
        post: agentChange(
          "requestInboundPeering",
          "Outbound is established: issues a one-time consumer credential for the reverse peering the agent runs",
          [201, "InboundPeering"],
          "RequestInboundPeeringRequest",
          [idempotencyKey],
        ),
      },
      "/api/v1/agents/{id}/peering/inbound/complete": {
        post: agentChange(
          "completeInboundPeering",
          "The agent ran the reverse peering: the platform checks it, asynchronously",
          [202, "PeeringStatus"],
          "CompleteInboundPeeringRequest",
          [idempotencyKey],
        ),
      },
      "/api/v1/agents/{id}/peering/teardown": {
        post: agentChange(
          "startPeeringTeardown",
          "Start tearing the peering down: issues a one-time peering user and consumer credential for the two liqoctl unpeer calls",
          [201, "PeeringTeardown"],
          "TeardownPeeringRequest",
        ),
      },
      "/api/v1/agents/{id}/peering/teardown/complete": {
        post: agentChange(
          "completePeeringTeardown",
          "The agent ran both liqoctl unpeer calls: both directions are None, nothing is offloaded",
          [200, "PeeringStatus"],
          "TeardownPeeringRequest",
        ),
      },
      "/api/v1/agents/{id}/peering": {
        get: operation("getPeeringStatus", "Both directions of the agent's peering", [200, "PeeringStatus"], {
          params: [agentId],
          errors: [404],
        }),
      },
      "/api/v1/agents/{id}/offloading": {
        get: operation("getOffloadingTargets", "Which namespaces to offload", [200, "OffloadingTargets"], {
          params: [agentId],
          errors: [404],
        }),
        put: agentChange(
          "reportOffloading",
          "Every namespace now offloaded",
          [200, "OffloadingTargets"],
          "ReportOffloadingRequest",
        ),
      },
      "/api/v1/agents/{id}/health-reports": {
        post: operation("createHealthReport", "The verify phase's pass/fail result", [201, "HealthReport"], {
          params: [agentId, idempotencyKey],
          body: "CreateHealthReportRequest",
          errors: [400, 404, 415, 422],
        }),
      },
    },
  };
}
