// SPDX-License-Identifier: Apache-2.0
// Starts a real tabletheoryd on the memory backend for the tests ($TT_DAEMON, default
// ../../_build/tabletheoryd relative to the client directory).
import { spawn, ChildProcess } from "node:child_process";
import { once } from "node:events";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CLIENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const ROOT = resolve(CLIENT_DIR, "..", "..");
const MODELS = [join(ROOT, "examples", "models"), join(ROOT, "tests", "integration", "models", "itest.yml"),
  join(ROOT, "tests", "clients", "models")];

export class Daemon {
  url = "";
  private log = "";
  private constructor(readonly proc: ChildProcess) {}

  static async start(...extra: string[]): Promise<Daemon> {
    const bin = process.env.TT_DAEMON ?? join(ROOT, "_build", "tabletheoryd");
    const args = ["--listen", "127.0.0.1:0", "--backend", "memory", ...MODELS.flatMap((m) => ["--models", m]), ...extra];
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("TABLETHEORYD_")));
    const proc = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"], env });
    const d = new Daemon(proc);
    const ready = new Promise<string>((res, rej) => {
      let buf = "";
      proc.stderr!.on("data", (chunk: Buffer) => {
        buf += chunk.toString();
        d.log += chunk.toString();
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          try {
            const j = JSON.parse(line);
            if (j.event === "daemon.ready") res(j.listen);
          } catch { /* not JSON */ }
        }
      });
      proc.on("exit", (code) => rej(new Error(`daemon exited (${code}): ${d.log}`)));
      setTimeout(() => rej(new Error(`daemon not ready: ${d.log}`)), 20000).unref();
    });
    d.url = "http://" + (await ready);
    return d;
  }

  /** Moves the frozen clock of a --test-clock daemon `ms` ms forward. */
  async advanceClock(ms: number): Promise<void> {
    const r = await fetch(this.url + "/v1/_test/clock", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ advance_ms: ms }),
    });
    if (r.status !== 200) throw new Error(`POST /v1/_test/clock: ${r.status} ${await r.text()}`);
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = once(this.proc, "exit");
    this.proc.kill("SIGTERM");
    await exited;
  }
}
