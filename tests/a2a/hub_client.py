"""Drives the hub's A2A face (`agentx serve`, /a2a) with the official Python SDK's client.

    python3 hub_client.py BASE_URL [TOKEN]

Reads one JSON command per stdin line and prints one JSON line per result:
  {"op": "card"}                                 -> the card as the SDK parsed it
  {"op": "send", "text": ..., "metadata": {...}, "taskId"?: ...}
                                                 -> {"task": ...} (non-streaming SendMessage)
  {"op": "get", "id": ...}                       -> {"task": ...}
  {"op": "cancel", "id": ...}                    -> {"task": ...}
  {"op": "subscribe", "id": ...}                 -> in the background, one {"stream": ...} line
                                                    per event, then {"streamEnd": id}
  {"op": "sendStream", "text": ..., "metadata": {...}}
                                                 -> SendStreamingMessage, in the background like
                                                    subscribe ({"streamEnd": "sendStream"})
Errors print {"error": "<type>: <message>"}.
"""

import asyncio
import json
import sys

import httpx
from google.protobuf.json_format import MessageToDict

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import CancelTaskRequest, GetTaskRequest, Role, SendMessageRequest, SubscribeToTaskRequest

BASE = sys.argv[1]
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None


def out(value):
    print(json.dumps(value), flush=True)


async def main():
    headers = {"Authorization": f"Bearer {TOKEN}"} if TOKEN else {}
    http = httpx.AsyncClient(headers=headers, timeout=30)
    loop = asyncio.get_running_loop()
    client = None
    streams = []

    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            break
        cmd = json.loads(line)
        try:
            if client is None:
                client = await create_client(BASE, ClientConfig(httpx_client=http, streaming=False))
            op = cmd["op"]
            if op == "card":
                from a2a.client import A2ACardResolver

                card = await A2ACardResolver(http, BASE).get_agent_card()
                out({"card": MessageToDict(card)})
            elif op == "send":
                message = new_text_message(cmd["text"], role=Role.ROLE_USER)
                if cmd.get("taskId"):
                    message.task_id = cmd["taskId"]
                message.metadata.update(cmd.get("metadata", {}))
                async for event in client.send_message(SendMessageRequest(message=message)):
                    out(MessageToDict(event))
            elif op == "sendStream":
                # SendStreamingMessage: the task, then its updates, until it ends.
                streaming = await create_client(BASE, ClientConfig(httpx_client=http, streaming=True))
                message = new_text_message(cmd["text"], role=Role.ROLE_USER)
                message.metadata.update(cmd.get("metadata", {}))

                async def run(c=streaming, m=message):
                    try:
                        async for event in c.send_message(SendMessageRequest(message=m)):
                            out({"stream": MessageToDict(event)})
                    except Exception as e:  # noqa: BLE001
                        out({"error": f"{type(e).__name__}: {e}"})
                    out({"streamEnd": "sendStream"})

                streams.append(asyncio.create_task(run()))
            elif op == "get":
                task = await client.get_task(GetTaskRequest(id=cmd["id"]))
                out({"task": MessageToDict(task)})
            elif op == "cancel":
                task = await client.cancel_task(CancelTaskRequest(id=cmd["id"]))
                out({"task": MessageToDict(task)})
            elif op == "subscribe":
                # Streaming is a capability of the card; this client instance asks for it.
                streaming = await create_client(BASE, ClientConfig(httpx_client=http, streaming=True))
                client_for_stream = streaming

                async def run(task_id=cmd["id"], c=client_for_stream):
                    try:
                        async for event in c.subscribe(SubscribeToTaskRequest(id=task_id)):
                            out({"stream": MessageToDict(event)})
                    except Exception as e:  # noqa: BLE001
                        out({"error": f"{type(e).__name__}: {e}"})
                    out({"streamEnd": task_id})

                streams.append(asyncio.create_task(run()))
                out({"subscribed": cmd["id"]})
            else:
                out({"error": f"unknown op {op}"})
        except Exception as e:  # noqa: BLE001 - reported to the test
            out({"error": f"{type(e).__name__}: {e}"})
    for s in streams:
        s.cancel()
    await http.aclose()


asyncio.run(main())
