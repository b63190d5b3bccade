import { type ChildProcess, spawn } from "node:child_process";

// Kills the processes listed in DIR/pids and removes DIR once this process is gone, however
// it went (SIGKILL included): testenv's watchdog, a detached sh that checks once a second
// whether it has been orphaned.
const script = `
parent=$1 dir=$2
orphaned() {
  kill -0 "$parent" 2>/dev/null || return 0
  ppid=$(ps -o ppid= -p $$ 2>/dev/null | tr -d ' ')
  [ -n "$ppid" ] && [ "$ppid" != "$parent" ]
}
while ! orphaned; do sleep 1; done
pids=$(cut -d' ' -f1 "$dir/pids" 2>/dev/null)
[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
rm -rf "$dir"
`;

export function spawnWatchdog(dir: string): ChildProcess {
  const child = spawn("sh", ["-c", script, "registry-watchdog", String(process.pid), dir], {
    detached: true,
    stdio: "ignore",
  });
  child.unref();
  return child;
}
