// A real OpenID Provider for the ext-auth-idp tests: npm oidc-provider (pinned in
// conformance/toolchain.py), configured as a company IdP that offers no Dynamic Client
// Registration, served over TLS on 127.0.0.1 with a port the kernel picks.
//
// Usage: node op_server.mjs PREFIX CONFIG_JSON
//   PREFIX: the npm prefix holding oidc-provider (toolchain.ensure_tool("oidc-provider"))
//   CONFIG_JSON: a file {"cert": PEM path, "key": PEM path, "admin_token": str,
//     "clients": [client metadata, as oidc-provider takes it], "scopes": [extra scopes],
//     "ttl_s": {"AccessToken": n, "IdToken": n, "RefreshToken": n, ...}}
// Once it listens it prints one line "issuer: https://127.0.0.1:PORT" on stdout.
//
// Rules:
// 1. Loopback only (127.0.0.1), port 0, TLS with the certificate named in the config.
// 2. Dynamic registration is off; clients come from the config, or from the admin hook
//    below (a test registers its own callback URL once its server has a port).
// 3. PKCE is required for every client (S256); a refresh token is issued to every client
//    allowed the refresh_token grant (the IdP presets the proxy models all offer one).
// 4. The development login and consent forms (devInteractions) are left on: any login
//    name with any password signs in as the account of that name, whose claims are
//    sub=name, email=name@example.test, name, preferred_username.
// 5. Keys (signing and cookies) are generated fresh at each start.
// 6. The admin hook, under /admin/, answers only a bearer equal to admin_token:
//      POST /admin/clients  {client metadata}        -> 200 {"client_id"} | 400 {"error"}
//      POST /admin/revoke   {"account": name}        -> 200 {"grants": n revoked}
//      POST /admin/faults   {"token": mode | null}   -> 200 {} ; mode is one of
//        "hang" (the token endpoint never answers), "html" (a 502 HTML error page),
//        "wrong-aud" / "wrong-nonce" (the id_token is signed again, by the OP's own key,
//        with that one claim changed). Faults last until set back to null.
//    Revoking destroys the account's grants and every token issued under them, so the
//    next refresh fails with invalid_grant (RFC 6749 section 5.2).
import { generateKeyPairSync, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [prefix, configPath] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configPath, "utf8"));
const fromPrefix = (name, file) =>
  import(pathToFileURL(join(prefix, "node_modules", name, file)).href);
const { default: Provider } = await fromPrefix("oidc-provider", "lib/index.js");
const jose = await fromPrefix("jose", "dist/webapi/index.js");

const MAX_ADMIN_BYTES = 64 * 1024;

// -- storage: the documented adapter interface, in memory, enumerable for the admin hook --
const store = new Map(); // `${model}:${id}` -> {payload, expiresAt}
class Adapter {
  constructor(model) {
    this.model = model;
  }
  key(id) {
    return `${this.model}:${id}`;
  }
  async upsert(id, payload, expiresIn) {
    const expiresAt = expiresIn ? Date.now() + expiresIn * 1000 : Infinity;
    store.set(this.key(id), { payload, expiresAt });
  }
  async find(id) {
    const entry = store.get(this.key(id));
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      store.delete(this.key(id));
      return undefined;
    }
    return entry.payload;
  }
  async findByUid(uid) {
    for (const [key, entry] of store) {
      if (key.startsWith(`${this.model}:`) && entry.payload.uid === uid) return this.find(key.slice(this.model.length + 1));
    }
    return undefined;
  }
  async findByUserCode(userCode) {
    for (const [key, entry] of store) {
      if (key.startsWith(`${this.model}:`) && entry.payload.userCode === userCode) return this.find(key.slice(this.model.length + 1));
    }
    return undefined;
  }
  async consume(id) {
    const entry = store.get(this.key(id));
    if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id) {
    store.delete(this.key(id));
  }
  async revokeByGrantId(grantId) {
    for (const [key, entry] of store) {
      if (key.startsWith(`${this.model}:`) && entry.payload.grantId === grantId) store.delete(key);
    }
  }
}

// -- the provider ----------------------------------------------------------------------
const signing = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey;
const signingJwk = { ...signing.export({ format: "jwk" }), kid: randomBytes(8).toString("hex"), alg: "RS256", use: "sig" };

const server = createServer({ cert: readFileSync(config.cert), key: readFileSync(config.key) });
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `https://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  adapter: Adapter,
  clients: config.clients ?? [],
  jwks: { keys: [signingJwk] },
  cookies: { keys: [randomBytes(32).toString("hex")] },
  scopes: ["openid", "offline_access", "email", "profile", ...(config.scopes ?? [])],
  claims: {
    openid: ["sub"],
    email: ["email", "email_verified"],
    profile: ["name", "preferred_username"],
  },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: false },
    revocation: { enabled: true },
    introspection: { enabled: true },
    userinfo: { enabled: true },
  },
  pkce: { required: () => true },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  ttl: { ...(config.ttl_s ?? {}) },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({
      sub: id,
      email: `${id}@example.test`,
      email_verified: true,
      name: id,
      preferred_username: id,
    }),
  }),
});

// -- faults on the token endpoint (koa middleware: the documented provider.use) ------------
let tokenFault = null;
const hanging = new Set();
provider.use(async (ctx, next) => {
  if (ctx.path !== "/token" || !tokenFault) return next();
  if (tokenFault === "hang") {
    await new Promise((resolve) => hanging.add(resolve));
    ctx.status = 504;
    return;
  }
  if (tokenFault === "html") {
    ctx.status = 502;
    ctx.type = "html";
    ctx.body = "<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>";
    return;
  }
  await next();
  const idToken = ctx.body?.id_token;
  if (typeof idToken !== "string") return;
  const claims = jose.decodeJwt(idToken);
  if (tokenFault === "wrong-aud") claims.aud = "someone-else";
  if (tokenFault === "wrong-nonce") claims.nonce = "not-the-nonce-sent";
  const key = await jose.importJWK(signingJwk, "RS256");
  ctx.body = {
    ...ctx.body,
    id_token: await new jose.SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: signingJwk.kid, typ: "JWT" })
      .sign(key),
  };
});

// -- the admin hook --------------------------------------------------------------------
function authorized(req) {
  const given = Buffer.from(req.headers.authorization ?? "");
  const wanted = Buffer.from(`Bearer ${config.admin_token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_ADMIN_BYTES) throw new Error("body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function revokeAccount(account) {
  const grants = [];
  for (const [key, entry] of store) {
    if (key.startsWith("Grant:") && entry.payload.accountId === account) grants.push(key.slice(6));
  }
  for (const grantId of grants) {
    for (const [key, entry] of store) {
      if (entry.payload.grantId === grantId) store.delete(key);
    }
    store.delete(`Grant:${grantId}`);
  }
  return grants.length;
}

async function admin(req, res) {
  const answer = (status, body) => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(JSON.stringify(body));
  };
  if (!authorized(req)) return answer(401, { error: "unauthorized" });
  if (req.method !== "POST") return answer(405, { error: "method not allowed" });
  let body;
  try {
    body = await readJson(req);
  } catch (error) {
    return answer(400, { error: String(error.message ?? error) });
  }
  if (req.url === "/admin/clients") {
    if (typeof body.client_id !== "string" || !body.client_id) {
      return answer(400, { error: "client_id missing" });
    }
    await new Adapter("Client").upsert(body.client_id, body);
    try {
      await provider.Client.find(body.client_id); // validated by oidc-provider's schema
    } catch (error) {
      await new Adapter("Client").destroy(body.client_id);
      return answer(400, { error: String(error.error_description ?? error.message ?? error) });
    }
    return answer(200, { client_id: body.client_id });
  }
  if (req.url === "/admin/revoke") {
    return answer(200, { grants: await revokeAccount(String(body.account)) });
  }
  if (req.url === "/admin/faults") {
    const modes = [null, "hang", "html", "wrong-aud", "wrong-nonce"];
    if (!modes.includes(body.token ?? null)) return answer(400, { error: "unknown fault" });
    tokenFault = body.token ?? null;
    if (!tokenFault) {
      for (const release of hanging) release();
      hanging.clear();
    }
    return answer(200, {});
  }
  return answer(404, { error: "not found" });
}

const callback = provider.callback();
server.on("request", (req, res) => {
  if (req.url.startsWith("/admin/")) {
    admin(req, res).catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
    return;
  }
  callback(req, res);
});
server.keepAliveTimeout = 1000;

function stop() {
  for (const release of hanging) release();
  server.close();
  server.closeAllConnections();
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

console.log(`issuer: ${issuer}`);
