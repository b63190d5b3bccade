// The plain values of the NVKE API contract (schemas.ts re-exports them): no zod here.

/** Fields of a cluster that a patch may not change. */
export const CLUSTER_IMMUTABLE_FIELDS = ["name", "provider", "network", "nico", "infra"] as const;
/** Fields of a cluster that only the controller sets. */
export const CLUSTER_READ_ONLY_FIELDS = ["id", "kubernetesVersion", "status", "createdAt", "updatedAt"] as const;

export const NODEPOOL_IMMUTABLE_FIELDS = ["name", "clusterID", "nodeNamePrefix", "role", "nico", "infra"] as const;
export const NODEPOOL_READ_ONLY_FIELDS = ["id", "clusterName", "status", "createdAt", "updatedAt"] as const;

export const API_ERROR_REASONS = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  409: "Conflict",
  415: "UnsupportedMediaType",
  422: "Invalid",
  500: "InternalError",
  503: "ServiceUnavailable",
} as const;

/** Paging limits every list route honours. */
export const LIST_LIMIT_DEFAULT = 500;
export const LIST_LIMIT_MAX = 1000;

export const MERGE_PATCH_CONTENT_TYPE = "application/merge-patch+json";
