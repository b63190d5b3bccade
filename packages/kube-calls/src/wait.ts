/**
 * The first wait: until the object has a condition at all. `[0]` of a missing or null list
 * selects nothing, which kubectl wait takes as "not yet" (client-go jsonpath's evalArray skips
 * a nil value).
 */
const HAS_A_CONDITION = "--for=jsonpath={.status.conditions[0].type}";

/**
 * The arguments of the two `kubectl wait` calls, to run in order, that wait until CRDs are
 * Established: `resources` names them (`crd/NAME…`, or `--filename DIR`), each call waits up
 * to `timeout` (`5m`, `60s`).
 *
 * UPSTREAM: kubernetes/kubernetes#66439. A CRD is created with `.status.conditions: null`
 * (apiextensions-apiserver's PrepareForCreate clears the status; `conditions` has no
 * omitempty) until the naming controller's first status update writes NamesAccepted and
 * Established (False, then True from the establishing controller) at once. On that null,
 * `kubectl wait --for=condition=Established` fails at once with ".status.conditions accessor
 * error: <nil> is of the type <nil>, expected []interface{}" (kubectl v1.32
 * pkg/cmd/wait/condition.go: `unstructured.NestedSlice` errs on a null, and the error ends the
 * wait), and the filtered jsonpath form `{.status.conditions[?(@.type=="Established")].status}`
 * fails at once too ("<nil> is not array or slice and cannot be filtered": jsonpath's
 * evalFilter does not skip a nil as its other steps do). Neither is fixed on kubectl's master.
 * So the first call waits until the CRD has a condition (`[0]` of an empty list would fail at
 * once, "array index out of bounds", but the naming controller writes two conditions or none),
 * after which the plain condition wait waits as documented. Each call has the whole `timeout`;
 * on a working API server the first ends within moments of the create.
 */
export function crdEstablishedWaitArgs(resources: readonly string[], timeout: string): [string[], string[]] {
  return [
    ["wait", HAS_A_CONDITION, ...resources, `--timeout=${timeout}`],
    ["wait", "--for=condition=Established", ...resources, `--timeout=${timeout}`],
  ];
}
