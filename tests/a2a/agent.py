"""An A2A 1.0 agent built with the official Python SDK (a2a-sdk), for the routing tests.

    python3 agent.py MODE RECORD_FILE [TOKEN]

Listens on 127.0.0.1 on a free port and prints `ready <base url>` on stdout once it serves.
MODE decides every task it gets:
  complete  an artifact with the answer ("Use Redis.")
  message   completes with the answer in its status message only (no artifact)
  ask       input-required with a question back
  fail      failed with a message
  reject    rejected
  hang      stays working until it is canceled
  choice    an artifact whose first line is an option's value ("lru")
AGENT_CARD_URL, when set, is the JSON-RPC URL the card names (another agent's, another
listener's) instead of this agent's own.
RECORD_FILE gets one JSON line per event: {"event": "message", "text", "metadata",
"authorization"} and {"event": "cancel", "taskId"}. With TOKEN, a request without
`Authorization: Bearer TOKEN` is refused (401).
"""

import asyncio
import json
import os
import socket
import sys

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse

from a2a.helpers.proto_helpers import new_text_message, new_text_part, new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandlerV2
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, TaskState

MODE, RECORD = sys.argv[1], sys.argv[2]
TOKEN = sys.argv[3] if len(sys.argv) > 3 else None


def record(event):
    with open(RECORD, "a", encoding="utf-8") as f:
        f.write(json.dumps(event) + "\n")


class Executor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        metadata = {}
        if message is not None and message.HasField("metadata"):
            from google.protobuf.json_format import MessageToDict

            metadata = MessageToDict(message.metadata)
        record({"event": "message", "text": context.get_user_input(), "metadata": metadata,
                "taskId": context.task_id})
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        up = TaskUpdater(event_queue, task.id, task.context_id)
        say = lambda text: new_text_message(text, context_id=task.context_id, task_id=task.id)
        if MODE == "complete":
            await up.start_work()
            await up.add_artifact([new_text_part("Use Redis.")], name="answer")
            await up.complete()
        elif MODE == "message":
            await up.complete(say("Use the in-process LRU."))
        elif MODE == "choice":
            await up.add_artifact([new_text_part("lru\nIt fits one node.")], name="answer")
            await up.complete()
        elif MODE == "ask":
            await up.requires_input(say("Which region must the cache survive a restart in?"))
        elif MODE == "fail":
            await up.failed(say("the model is overloaded"))
        elif MODE == "reject":
            await up.reject(say("not my area"))
        elif MODE == "hang":
            await up.start_work()
            # Stays working; the framework cancels this coroutine on CancelTask.
            await asyncio.sleep(3600)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        record({"event": "cancel", "taskId": context.task_id})
        up = TaskUpdater(event_queue, context.task_id, context.context_id)
        await up.cancel()


def main():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name=f"test agent ({MODE})",
        description="answers clarifications for the routing tests",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=os.environ.get("AGENT_CARD_URL", f"{base}/"), protocol_binding="JSONRPC",
                                             protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="answer", name="answer", description="answers", tags=["test"])],
    )
    handler = DefaultRequestHandlerV2(agent_executor=Executor(), task_store=InMemoryTaskStore(),
                                      agent_card=card)
    app = Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, "/"))
    if TOKEN is not None:
        inner = app

        async def guarded(scope, receive, send):
            if scope["type"] == "http" and scope["path"] != "/.well-known/agent-card.json":
                auth = dict(scope["headers"]).get(b"authorization", b"").decode()
                if auth != f"Bearer {TOKEN}":
                    record({"event": "unauthorized"})
                    await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
                    return
            await inner(scope, receive, send)

        app = guarded
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)

    async def serve():
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started:
            await asyncio.sleep(0.02)
        print(f"ready {base}", flush=True)
        await task

    asyncio.run(serve())


if __name__ == "__main__":
    main()
