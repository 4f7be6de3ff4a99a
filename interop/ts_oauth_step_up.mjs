// The official TypeScript SDK's OAuth client (v1: @modelcontextprotocol/sdk; v2:
// @modelcontextprotocol/client) against one protected MCP server, in the SDK's own default
// flow: an OAuthClientProvider as the SDK's examples write it (dynamic registration with
// the challenge's scope, PKCE), Client + StreamableHTTPClientTransport, and on
// UnauthorizedError the host's part: open the authorization URL, hand the callback to
// transport.finishAuth(), try again. The "browser" is a fetch of the authorization URL
// without following the redirect (the development authorization server consents at once).
//
// Per scenario: connect, call READ_TOOL, then WRITE_TOOL (which needs a wider scope: the
// server answers 403 insufficient_scope and the SDK steps up by itself). Prints one JSON
// line: a list with, per scenario, {grantTypes, registeredScope, registrations,
// scopesAsked, tokenScope, read, write}, where read and write are {text} or {error}.
//
// Usage: node ts_oauth_step_up.mjs SDK PREFIX URL READ_TOOL WRITE_TOOL SCENARIOS_JSON
//   SDK: "v1" or "v2"; PREFIX: the npm prefix holding that SDK (conformance/toolchain.py)
//   SCENARIOS_JSON: a list of {"grantTypes": [...]} (the registered grant types)
// Exit status 0 whenever the summary was printed; a crash exits 1 with the error on stderr.
import { inMemoryProvider, loadClient } from "../conformance/ts_sdk.mjs";

const [sdk, prefix, url, readTool, writeTool, scenariosJson] = process.argv.slice(2);
const REDIRECT = "http://127.0.0.1/callback"; // loopback: the server matches any port
const MAX_LOGINS = 3; // per operation: a login, a step-up, one more to show a loop
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await loadClient(sdk, prefix);

/** The provider as the SDK's examples write it, keeping everything in memory. */
function memoryProvider(grantTypes) {
  return inMemoryProvider({
    redirect: REDIRECT,
    clientName: `mcpkit interop (TypeScript SDK ${sdk})`,
    grantTypes,
  });
}

/** The browser: GET the authorization URL, read the callback's query from the redirect. */
async function browse(authorizationUrl) {
  const answer = await fetch(authorizationUrl, { redirect: "manual" });
  if (answer.status !== 302 && answer.status !== 303) {
    throw new Error(`authorization answered ${answer.status}: ${await answer.text()}`);
  }
  return new URL(answer.headers.get("location")).searchParams;
}

function describe(error) {
  return { name: error?.name, message: String(error?.message ?? error) };
}

/** Run op; on UnauthorizedError after a redirect, complete the login and run it again. */
async function withLogins(op, state, transportOf) {
  for (let logins = 0; ; logins++) {
    try {
      return { value: await op() };
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || !state.pending || logins >= MAX_LOGINS) {
        return { error: describe(error) };
      }
      const callback = await browse(state.pending);
      state.pending = undefined;
      // v1 takes the code; v2 takes the callback's parameters (it checks iss, RFC 9207).
      await transportOf().finishAuth(sdk === "v1" ? callback.get("code") : callback);
    }
  }
}

async function scenario({ grantTypes }) {
  const { provider, state } = memoryProvider(grantTypes);
  const client = new Client({ name: "mcpkit-interop-ts-oauth", version: "0.0.0" });
  let transport;
  const connected = await withLogins(
    async () => {
      // A started transport cannot start again: each attempt gets a new one (as the
      // SDK's OAuth example does).
      transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
      await client.connect(transport);
    },
    state,
    () => transport,
  );
  const call = async (name) => {
    if (connected.error) return connected;
    const done = await withLogins(
      () => client.callTool({ name, arguments: name === writeTool ? { text: sdk } : {} }),
      state,
      () => transport,
    );
    if (done.error) return done;
    const result = done.value;
    if (result.isError) return { error: { name: "isError", message: result.content?.[0]?.text } };
    return { text: result.content[0].text };
  };
  const read = await call(readTool);
  const write = await call(writeTool);
  await client.close().catch(() => {});
  return {
    grantTypes,
    connected: connected.error ?? true,
    registeredScope: state.registrations[0]?.scope ?? null,
    registrations: state.registrations.length,
    scopesAsked: state.visits.map((v) => new URL(v).searchParams.get("scope")),
    tokenScope: state.tokens?.scope ?? null,
    accessToken: state.tokens?.access_token ?? null,
    read,
    write,
  };
}

const summary = [];
for (const each of JSON.parse(scenariosJson)) summary.push(await scenario(each));
console.log(JSON.stringify(summary));
