#!/bin/sh
# A stand-in for an agent CLI in its headless mode, for tests and the demo.
#
#   agent.sh FORMAT [the real CLI's arguments...]
#
# FORMAT is claude, codex, gemini, copilot, cursor or plain. Each accepts the flags of the real
# CLI that AgentX Clarify's presets pass (docs/runners.md), takes the prompt where that CLI
# takes it (argument or stdin), and prints exactly what that CLI prints. What it answers and
# how it behaves is set by the environment (a runner's `env` table):
#
#   AGENT_MODE     answer (default) | slow | crash | signal | silent | chatty | hang | orphan |
#                  escape | ask | stop | fenced | error | empty
#   AGENT_ANSWER   the answer; default: a canned answer chosen by the prompt's "- Topic:" line
#   AGENT_SLEEP    seconds of the slow mode (default 30)
#   AGENT_ASK_TO   the `to:` of the ask mode's [CLARIFICATION_NEEDED] block
#   AGENT_EXIT     exit status of the error mode (default 1)
#   AGENT_PIDFILE  file to which the slow, hang, orphan and escape modes append their pids
#   AGENT_RECORD   file to write what was received: {"format","args","cwd","prompt","system"}

set -u
LC_ALL=C
export LC_ALL

format=${1:?usage: agent.sh FORMAT [args...]}
shift

# A JSON string literal of stdin (bytes >= 0x80 pass through: UTF-8 stays UTF-8).
json_str() {
  printf '"'
  od -An -v -tu1 | awk '
    BEGIN { for (i = 1; i < 256; i++) ch[i] = sprintf("%c", i) }
    { for (i = 1; i <= NF; i++) { b = $i + 0
        if (b == 34) printf "\\\""
        else if (b == 92) printf "\\\\"
        else if (b == 10) printf "\\n"
        else if (b == 13) printf "\\r"
        else if (b == 9) printf "\\t"
        else if (b < 32 || b == 127) printf "\\u%04x", b
        else printf "%s", ch[b] } }'
  printf '"'
}
# Most strings need no escaping: those cost no process.
json() {
  case $1 in
    *[[:cntrl:]\"\\]*) printf '%s' "$1" | json_str ;;
    *) printf '"%s"' "$1" ;;
  esac
}

args_json=""
add_arg() { args_json="$args_json${args_json:+,}$(json "$1")"; }

prompt=""        # the prompt given as an argument
system=""        # persona received out of band: system prompt, developer instructions, agent
output=text      # --output-format
read_stdin=yes   # whether stdin carries (part of) the prompt

# Only when recording: each argument costs an od and an awk.
if [ -n "${AGENT_RECORD-}" ]; then
  for a in "$@"; do add_arg "$a"; done
fi

case $format in
claude)
  while [ $# -gt 0 ]; do
    case $1 in
      --output-format) output=${2-}; shift ;;
      --output-format=*) output=${1#*=} ;;
      --append-system-prompt|--system-prompt) system=${2-}; shift ;;
      --model|--resume|-r|--max-turns|--allowedTools|--disallowedTools|--permission-mode|--mcp-config) shift ;;
      -*) ;;
      *) prompt=$1 ;;
    esac
    shift
  done ;;
codex)
  [ "${1-}" = exec ] || { echo "error: usage: codex exec [OPTIONS] [PROMPT]" >&2; exit 2; }
  shift
  while [ $# -gt 0 ]; do
    case $1 in
      --json) output=json ;;
      -c|--config) case ${2-} in developer_instructions=*) system=${2#developer_instructions=} ;; esac; shift ;;
      -m|--model|-s|--sandbox|-o|--output-last-message|-C|--cd|--output-schema|-p|--profile) shift ;;
      -) ;;
      -*) ;;
      *) prompt=$1 ;;
    esac
    shift
  done ;;
gemini)
  while [ $# -gt 0 ]; do
    case $1 in
      --output-format|-o) output=${2-}; shift ;;
      -p|--prompt) prompt=${2-}; shift ;;
      -m|--model|--approval-mode) shift ;;
      -*) ;;
      *) prompt=$1 ;;
    esac
    shift
  done ;;
copilot)
  read_stdin=no
  while [ $# -gt 0 ]; do
    case $1 in
      -p|--prompt) prompt=${2-}; shift ;;
      --agent) system=${2-}; shift ;;
      --agent=*) system=${1#*=} ;;
      --model|--add-dir|--allow-tool|--deny-tool|--secret-env-vars) shift ;;
      -*) ;;
      *) ;;
    esac
    shift
  done ;;
cursor)
  read_stdin=no
  while [ $# -gt 0 ]; do
    case $1 in
      --output-format) output=${2-}; shift ;;
      --output-format=*) output=${1#*=} ;;
      --mode|--model|--workspace|--resume|--api-key|-H|--header) shift ;;
      -*) ;;
      *) prompt=$1 ;;
    esac
    shift
  done ;;
plain)
  prompt="$*"
  [ $# -gt 0 ] && read_stdin=no ;;
*)
  echo "agent.sh: unknown format '$format'" >&2; exit 2 ;;
esac

# The whole input, as the real CLI assembles it: stdin first, then the prompt argument.
input=$prompt
if [ "$read_stdin" = yes ] && [ ! -t 0 ]; then
  stdin=$(cat; printf x)
  stdin=${stdin%x}
  if [ -n "$stdin" ] && [ -n "$prompt" ]; then
    input="$stdin

$prompt"
  elif [ -n "$stdin" ]; then
    input=$stdin
  fi
fi

if [ -n "${AGENT_RECORD-}" ]; then
  printf '{"format":%s,"args":[%s],"cwd":%s,"prompt":%s,"system":%s}\n' \
    "$(json "$format")" "$args_json" "$(json "$(pwd)")" "$(json "$input")" "$(json "$system")" \
    >"$AGENT_RECORD"
fi

# The record's facts, from the prompt's "- Key: value" lines (bodies are quoted with "> ",
# so the first match is the facts list).
topic= me= from= id=
while IFS= read -r line; do
  case $line in
    "- Topic: "*) [ -n "$topic" ] || topic=${line#- Topic: } ;;
    "- To: "*) [ -n "$me" ] || { me=${line#- To: }; me=${me% (you)}; } ;;
    "- From: "*) [ -n "$from" ] || from=${line#- From: } ;;
    "- Clarification: "*) [ -n "$id" ] || id=${line#- Clarification: } ;;
  esac
done <<EOF_INPUT
$input
EOF_INPUT

canned() {
  case $topic in
    *[Cc]ache*) printf 'Redis, with LRU eviction and a 15-minute TTL (ADR-7).' ;;
    *[Aa]uth*|*[Ll]ogin*) printf 'OAuth2 with PKCE through the existing identity provider; store no passwords.' ;;
    *[Ee]xport*|*[Ss]cope*) printf 'CSV export is in scope for this release; PDF is not.' ;;
    *) printf 'Follow the acceptance criteria in the issue as written; nothing else is required.' ;;
  esac
}
answer=${AGENT_ANSWER-$(canned)}

pid_note() { [ -n "${AGENT_PIDFILE-}" ] && echo "$1" >>"$AGENT_PIDFILE"; return 0; }

mode=${AGENT_MODE:-answer}
text=$answer
case $mode in
  answer) ;;
  empty) text="" ;;
  slow)
    pid_note $$
    sleep "${AGENT_SLEEP:-30}" & pid_note $!
    wait ;;
  crash)
    echo "fatal: the agent crashed while reading the repository" >&2
    exit 1 ;;
  signal)
    kill -s TERM $$
    sleep 5; exit 3 ;;
  silent) exit 0 ;;
  chatty)
    # 5 MiB on each stream, stderr first: a reader of stdout alone would deadlock.
    head -c 5242880 /dev/zero | tr '\0' 'e' >&2
    head -c 5242880 /dev/zero | tr '\0' 'o'
    echo ;;
  hang)
    # Never exits; its children keep stdout and stderr open.
    pid_note $$
    sleep 100000 & pid_note $!
    sh -c 'sleep 100000 & echo $! >>"${AGENT_PIDFILE:-/dev/null}"; wait' & pid_note $!
    # Noted: the leader, its child, the child shell; the grandchild is noted by that shell.
    i=0
    while [ -n "${AGENT_PIDFILE-}" ] && [ "$(wc -l <"$AGENT_PIDFILE")" -lt 4 ] && [ $i -lt 500 ]; do
      sleep 0.01; i=$((i + 1))
    done
    echo "started everything" >&2
    while :; do sleep 1; done ;;
  orphan)
    # Exits at once, leaving a child that holds stdout open.
    sleep 100000 & pid_note $!
    ;;
  escape)
    # Leaves a child in a session of its own, out of reach of a group kill, holding stdout.
    setsid sleep 100000 &
    child=$!
    pid_note $child
    # Exit only once it has its own session: before that, the group kill would still reach it.
    sid() { awk '{ print $6 }' "/proc/$1/stat" 2>/dev/null; }
    mine=$(sid $$)
    i=0
    while [ "$(sid $child)" = "$mine" ] && [ $i -lt 500 ]; do
      sleep 0.01; i=$((i + 1))
    done ;;
  ask)
    text="[CLARIFICATION_NEEDED]
agent_id: ${me:-agent}
blocked_at: ${topic:-the question}
questions:
- Which environments must this survive a restart in?
- Is a managed service acceptable, or must it run in-process?
current_state: read the question and the linked ADRs; nothing changed${AGENT_ASK_TO:+
to: $AGENT_ASK_TO}
[/CLARIFICATION_NEEDED]" ;;
  stop)
    text="I cannot answer this from here.

[STOP_WORK]
agent_id: ${me:-agent}
blocker_type: missing_access
details: the architecture decision records are not readable from this workspace
state_snapshot: |
  read ${id:-the request}; opened no files
blocked_work: answering ${id:-the request}
resume_requirements: read access to docs/adr
[/STOP_WORK]" ;;
  fenced)
    text="Checked the ADRs and the current configuration.

\`\`\`json
{\"answer\": $(json "$answer")}
\`\`\`" ;;
  error) ;;
  *) echo "agent.sh: unknown AGENT_MODE '$mode'" >&2; exit 2 ;;
esac

session=3f2b8c1e-5d7a-4e9b-a0c4-7d1e2f3a4b5c

if [ "$mode" = error ]; then
  status=${AGENT_EXIT:-1}
  case $format in
    claude)
      if [ "$output" = json ]; then
        printf '{"type":"result","subtype":"success","is_error":true,"duration_ms":412,"duration_api_ms":398,"num_turns":1,"result":"API Error: 529 {\\"type\\":\\"overloaded_error\\",\\"message\\":\\"Overloaded\\"}","session_id":"%s","total_cost_usd":0}\n' "$session"
      else
        echo "API Error: 529 Overloaded" >&2
      fi ;;
    codex)
      printf '{"type":"thread.started","thread_id":"%s"}\n{"type":"turn.started"}\n' "$session"
      printf '{"type":"error","message":"stream disconnected before completion: rate limit reached"}\n'
      printf '{"type":"turn.failed","error":{"message":"stream disconnected before completion: rate limit reached"}}\n' ;;
    gemini)
      # Gemini CLI writes its JSON error to stderr and exits non-zero.
      printf '{"error":{"type":"FatalAuthenticationError","message":"GEMINI_API_KEY environment variable not found.","code":41}}\n' >&2
      status=${AGENT_EXIT:-41} ;;
    *) echo "Error: authentication failed; run the CLI's login first" >&2 ;;
  esac
  exit "$status"
fi

case $format in
  claude)
    if [ "$output" = json ]; then
      printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":1843,"duration_api_ms":1790,"num_turns":1,"result":%s,"stop_reason":"end_turn","session_id":"%s","total_cost_usd":0.0042,"usage":{"input_tokens":812,"output_tokens":41}}\n' \
        "$(json "$text")" "$session"
    else
      printf '%s\n' "$text"
    fi ;;
  codex)
    if [ "$output" = json ]; then
      printf '{"type":"thread.started","thread_id":"%s"}\n{"type":"turn.started"}\n' "$session"
      printf '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Reading the question and the ADRs**"}}\n'
      printf '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":%s}}\n' "$(json "$text")"
      printf '{"type":"turn.completed","usage":{"input_tokens":2310,"cached_input_tokens":1024,"output_tokens":58}}\n'
    else
      echo "[codex] working" >&2
      printf '%s\n' "$text"
    fi ;;
  gemini)
    if [ "$output" = json ]; then
      printf '{"response":%s,"stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":1,"totalErrors":0,"totalLatencyMs":1520},"tokens":{"prompt":901,"candidates":37,"total":938}}},"tools":{"totalCalls":0},"files":{"totalLinesAdded":0,"totalLinesRemoved":0}}}\n' \
        "$(json "$text")"
    else
      printf '%s\n' "$text"
    fi ;;
  cursor)
    if [ "$output" = json ]; then
      printf '{"type":"result","subtype":"success","is_error":false,"duration_ms":2210,"duration_api_ms":2210,"result":%s,"session_id":"%s","request_id":"req_01"}\n' \
        "$(json "$text")" "$session"
    else
      printf '%s\n' "$text"
    fi ;;
  copilot|plain)
    printf '%s\n' "$text" ;;
esac
