// The official TypeScript tasks client (@modelcontextprotocol/ext-tasks, with the
// TypeScript SDK's @modelcontextprotocol/client and its Streamable HTTP transport) against
// one MCP server: connect, see whether the server supports tasks, call one tool as a
// required task, wait for its outcome, print one JSON summary line on stdout.
//
// Usage: node ts_tasks_client.mjs PREFIX URL ERA TOOL ARGUMENTS_JSON
//   PREFIX: the npm prefix holding both packages (conformance/toolchain.py "ext-tasks")
//   ERA: "legacy" (2025-11-25 initialize handshake) or a modern revision to pin
//        ("2026-07-28": server/discover, per-request _meta)
// The summary: {era, protocolVersion, generation, extensionEntry, capabilities,
// kind, taskId, status, result | error}. Exit status 0 whenever a summary was printed;
// the caller judges it. Anything else (a crash) exits 1 with the error on stderr.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, url, era, tool, argumentsJson] = process.argv.slice(2);
const TASKS = "io.modelcontextprotocol/tasks";

/** Import a package's ESM entry point from PREFIX (bare specifiers resolve from this file). */
async function importFrom(name, subpath = ".") {
  const dir = join(prefix, "node_modules", ...name.split("/"));
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const entry = manifest.exports[subpath].import;
  const file = typeof entry === "string" ? entry : entry.default;
  return import(pathToFileURL(join(dir, file)).href);
}

const { Client, StreamableHTTPClientTransport } = await importFrom("@modelcontextprotocol/client");
const { createTaskSessionFromClient, resultFromTaskOutcome } = await importFrom(
  "@modelcontextprotocol/ext-tasks",
  "./client",
);

const clientInfo = { name: "mcpkit-interop-ts-tasks", version: "0.0.0" };
const clientCapabilities = { extensions: { [TASKS]: {} } };

/**
 * The host-owned raw request path ext-tasks needs on 2026-07-28 (the SDK Client's codecs
 * reject task-shaped results there): a second SDK Streamable HTTP transport to the same
 * endpoint, correlating responses by JSON-RPC id. The transport derives
 * MCP-Protocol-Version, Mcp-Method and Mcp-Name from the request's _meta envelope.
 */
async function rawDispatcher() {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const pending = new Map();
  let nextId = 1;
  transport.onmessage = (message) => {
    const waiter = pending.get(message.id);
    if (waiter === undefined) return;
    pending.delete(message.id);
    waiter.resolve(
      "error" in message
        ? { kind: "error", error: message.error }
        : { kind: "result", result: message.result },
    );
  };
  transport.onerror = () => {};
  await transport.start();
  const dispatch = (request, options = {}) =>
    new Promise((resolve, reject) => {
      const id = `raw-${nextId++}`;
      pending.set(id, { resolve });
      const headers = options.context?.headers;
      transport
        .send({ ...request, jsonrpc: "2.0", id }, headers === undefined ? {} : { headers })
        .catch((error) => {
          pending.delete(id);
          reject(error);
        });
      options.signal?.addEventListener("abort", () => {
        pending.delete(id);
        reject(options.signal.reason);
      });
    });
  return { dispatch, close: () => transport.close() };
}

const modern = era !== "legacy";
const client = new Client(clientInfo, {
  capabilities: modern ? clientCapabilities : {},
  ...(modern ? { versionNegotiation: { mode: { pin: era } } } : {}),
});
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const raw = modern ? await rawDispatcher() : undefined;

const serverCapabilities = client.getServerCapabilities() ?? {};
const summary = {
  era,
  protocolEra: client.getProtocolEra() ?? null,
  extensionEntry: serverCapabilities.extensions?.[TASKS] ?? null,
  legacyTasksCapability: serverCapabilities.tasks ?? null,
};
const session = createTaskSessionFromClient(client, {
  endpointId: `mcpkit-interop-${era}`,
  ...(modern
    ? {
        rawDispatch: raw.dispatch,
        v2RequestFraming: { protocolVersion: era, clientInfo, clientCapabilities },
      }
    : {}),
});
summary.capabilities = { ...session.capabilities };
try {
  const execution = await session.callTool(tool, JSON.parse(argumentsJson), {
    task: { preference: "require" },
  });
  summary.kind = execution.kind;
  summary.taskId = execution.handle?.taskId ?? null;
  const { outcome, lastTask } = await execution.settle();
  summary.status = outcome.status;
  summary.lastTaskStatus = lastTask?.status ?? null;
  summary.result = resultFromTaskOutcome(outcome);
} catch (error) {
  summary.error = { name: error?.name ?? "Error", message: String(error?.message ?? error) };
} finally {
  await session.close();
  await raw?.close();
  await client.close();
}
process.stdout.write(`${JSON.stringify(summary)}\n`);
