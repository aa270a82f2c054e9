// Issues a signed development token for the operator API.
//   node scripts/dev-token.mjs [--keys DIR] [--sub NAME] [--hours N] [--tenants A,B|*] ROLE...
// ROLE is viewer, operator, payload-reader or admin; --tenants names the tenants the token covers (default *, all).
// The key pair is made in DIR (default target/dev-keys) the first time; start the service with
//   -Dmp.jwt.verify.publickey.location=DIR/public.pem
// Never use these keys outside a local setup; they are not committed anywhere.
import { generateKeyPairSync, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
let dir = 'target/dev-keys';
let sub = process.env.USER || 'developer';
let hours = 8;
let tenants = ['*'];
const roles = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--keys') dir = args[++i];
  else if (args[i] === '--sub') sub = args[++i];
  else if (args[i] === '--hours') hours = Number(args[++i]);
  else if (args[i] === '--tenants') tenants = args[++i].split(',').map((t) => t.trim()).filter(Boolean);
  else roles.push(args[i]);
}
const known = ['viewer', 'operator', 'payload-reader', 'admin'];
if (roles.length === 0 || roles.some((r) => !known.includes(r))) {
  console.error(`usage: node scripts/dev-token.mjs [--keys DIR] [--sub NAME] [--hours N] [--tenants A,B|*] ROLE...  (roles: ${known.join(', ')})`);
  process.exit(2);
}
const pub = join(dir, 'public.pem');
const priv = join(dir, 'private.pem');
if (!existsSync(priv)) {
  mkdirSync(dir, { recursive: true });
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  writeFileSync(pub, publicKey);
  writeFileSync(priv, privateKey, { mode: 0o600 });
  console.error(`made a development key pair in ${dir}`);
}
const b64 = (o) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');
const now = Math.floor(Date.now() / 1000);
const head = b64({ alg: 'RS256', typ: 'JWT' });
const body = b64({ iss: 'poison-guard', aud: 'poison-guard', sub, upn: sub, groups: roles, tenants, iat: now, exp: now + hours * 3600 });
const signature = sign('RSA-SHA256', Buffer.from(`${head}.${body}`), readFileSync(priv)).toString('base64url');
console.log(`${head}.${body}.${signature}`);
