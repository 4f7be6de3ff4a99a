// The official TypeScript SDK's OAuth client (v1: @modelcontextprotocol/sdk; v2:
// @modelcontextprotocol/client), end to end against one protected MCP server, in the SDK's
// default flow: an OAuthClientProvider as the SDK's examples write it (dynamic
// registration, PKCE, `resource`), Client + StreamableHTTPClientTransport, and on
// UnauthorizedError the host's part: open the authorization URL, hand the callback to
// transport.finishAuth(), connect again.
//
// The "browser" is the Python test: this script prints {"authorize": URL} on stdout and
// reads one line from stdin, the callback URL the test's headless browser reached (after
// the authorization server's and the upstream IdP's login and consent forms).
//
// Then: list the tools, call TOOL with ARGS_JSON, make the access token unusable (as an
// expired one is) and call it again: the SDK answers the 401 by refreshing with its refresh
// token and retries. Prints one line {"result": {...}}: tools, first, second (the tool's
// text or {error}), logins, registrations, tokens (every token response saved, in order),
// authorizationUrls.
//
// Usage: node ts_oauth_client.mjs SDK PREFIX URL REDIRECT_URI TOOL ARGS_JSON
//   SDK: "v1" or "v2"; PREFIX: the npm prefix holding that SDK (conformance/toolchain.py)
// Exit status 0 whenever the result was printed; a crash exits 1 with the error on stderr.
// TLS: trust a test CA with NODE_EXTRA_CA_CERTS.
import { createInterface } from "node:readline";
import { inMemoryProvider, loadClient } from "../../../conformance/ts_sdk.mjs";

const [sdk, prefix, url, redirect, tool, argsJson] = process.argv.slice(2);
const MAX_LOGINS = 2; // per operation
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = await loadClient(sdk, prefix);

const stdin = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** The browser: the Python test signs in and answers the callback URL. */
async function browse(authorizationUrl) {
  console.log(JSON.stringify({ authorize: authorizationUrl.href }));
  const { value, done } = await stdin.next();
  if (done) throw new Error("stdin closed before the callback URL came");
  return new URL(value.trim()).searchParams;
}

const { provider, state } = inMemoryProvider({
  redirect,
  clientName: `mcpkit interop (TypeScript SDK ${sdk})`,
  grantTypes: ["authorization_code", "refresh_token"],
});
let signIns = 0;

const describe = (error) => ({ error: { name: error?.name, message: String(error?.message ?? error) } });

const client = new Client({ name: "mcpkit-idp-interop", version: "0.0.0" });
let transport;

async function withLogins(op) {
  for (let logins = 0; ; logins++) {
    try {
      return await op();
    } catch (error) {
      if (!(error instanceof UnauthorizedError) || !state.pending || logins >= MAX_LOGINS) throw error;
      const callback = await browse(state.pending);
      state.pending = undefined;
      signIns += 1;
      // v1 takes the code; v2 takes the callback's parameters (it checks iss, RFC 9207).
      await transport.finishAuth(sdk === "v1" ? callback.get("code") : callback);
    }
  }
}

async function connect() {
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await client.connect(transport);
}

async function call() {
  try {
    const result = await withLogins(() => client.callTool({ name: tool, arguments: JSON.parse(argsJson) }));
    if (result.isError) return { error: { name: "isError", message: result.content?.[0]?.text } };
    return { text: result.content[0].text };
  } catch (error) {
    return describe(error);
  }
}

const result = {};
try {
  await withLogins(connect);
  result.tools = (await client.listTools()).tools.map((t) => t.name).sort();
  result.first = await call();
  // The access token stops working (as an expired one does): the SDK refreshes on the 401.
  state.tokens = { ...state.tokens, access_token: "no-longer-valid" };
  result.second = await call();
} catch (error) {
  Object.assign(result, describe(error));
}
await client.close().catch(() => {});
Object.assign(result, {
  logins: signIns,
  registrations: state.registrations.length,
  client: state.client ?? null,
  tokens: state.saved,
  authorizationUrls: state.visits,
});
console.log(JSON.stringify({ result }));
process.exit(0);
