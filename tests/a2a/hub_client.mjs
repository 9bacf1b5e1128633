// Drives agentx serve's A2A face with the official JS SDK (@a2a-js/sdk), as docs/a2a.md shows.
//
//   node hub_client.mjs BASE_URL TOKEN send '{"text": …, "metadata": {…}}'
//   node hub_client.mjs BASE_URL TOKEN get ID
//
// Prints one JSON line: {"id", "state", "text"} (state by name, text of the first artifact).
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const [base, token, op, arg] = process.argv.slice(2);
const withToken = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${token}`);
  return fetch(url, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: withToken })],
  }),
);
const client = await factory.createFromUrl(base);
let task;
if (op === 'send') {
  const { text, metadata } = JSON.parse(arg);
  task = await client.sendMessage({
    message: {
      messageId: crypto.randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text } }],
      metadata,
    },
  });
} else {
  task = await client.getTask({ id: arg });
}
console.log(
  JSON.stringify({
    id: task.id,
    state: TaskState[task.status?.state],
    text: task.artifacts?.[0]?.parts?.[0]?.content?.value ?? null,
  }),
);
