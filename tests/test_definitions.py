"""Definitions the chunker used to miss (issue 32 item 10, issue 34's C items), found by name through the real
engine: JavaScript's assigned and nested functions, TypeScript's object-literal methods, C's function-like
macros and the functions of kernel-style C whose parse the grammar's error recovery lost."""

from __future__ import annotations

import textwrap

import pytest

from desktop_app.search.request import SearchRequest
from desktop_app.worker import ops
from desktop_app.worker.worker import EngineConfig, Worker

from .test_chunking import chunks_of, symbols

# In the style of fastify's fastify.js: the whole instance is built inside one factory function, its methods
# declared in it after the `return`, a few assigned to the object.
FASTIFY = """
'use strict'

const { kState, kHooks, kErrorHandler } = require('./lib/symbols')
const { buildRouting } = require('./lib/route')

function fastify (options) {
  const router = buildRouting(options.router)

  const fastify = {
    [kState]: {},
    route: function _route (options) {
      return router.route({ options, isFastify: true })
    },
    addHook,
    setNotFoundHandler,
    setErrorHandler
  }

  fastify.setSchemaController = function setSchemaController (schemaControllerOpts) {
    throwIfAlreadyStarted('Cannot call "setSchemaController"!')
    this[kSchemaController] = schemaControllerOpts
    return this
  }

  Object.defineProperties(fastify, {
    server: { get () { return this[kState].server } },
    pluginName: { get () { return this[kPluginNameChain].join(' -> ') } },
    prefix: { get () { return this[kRoutePrefix] } },
    validatorCompiler: { get () { return this[kSchemaController].getValidatorCompiler() } }
  })

  return fastify

  // wrapper that we expose to the user for hooks handling
  function addHook (name, fn) {
    throwIfAlreadyStarted('Cannot call "addHook"!')
    if (fn == null) {
      throw new errorCodes.FST_ERR_HOOK_INVALID_HANDLER(name, fn)
    }
    this[kHooks].add(name, fn)
    return this
  }

  function setNotFoundHandler (opts, handler) {
    throwIfAlreadyStarted('Cannot call "setNotFoundHandler"!')
    this.after((notHandledErr, done) => {
      router.setNotFoundHandler.call(this, opts, handler, avvio, router.routeHandler)
      done(notHandledErr)
    })
    return this
  }

  // wrapper that we expose to the user for configure the error handler
  function setErrorHandler (func) {
    throwIfAlreadyStarted('Cannot call "setErrorHandler"!')
    this[kErrorHandler] = buildErrorHandler(this[kErrorHandler], func.bind(this))
    return this
  }
}

fastify.route = function (options) {
  return this.router.route(options)
}

module.exports = fastify
module.exports.fastify = fastify
module.exports.errorCodes = errorCodes
"""

# In the style of express's lib/response.js.
EXPRESS = """
'use strict';

var res = Object.create(http.ServerResponse.prototype)

module.exports = res

res.status = function status(code) {
  this.statusCode = code;
  return this;
};

res.sendFile = function sendFile(path, options, callback) {
  var done = callback;
  var req = this.req;
  var opts = options || {};
  if (!path) {
    throw new TypeError('path argument is required to res.sendFile');
  }
  sendfile(res, file, opts, function (err) {
    if (done) return done(err);
  });
};

exports.contentDisposition = (filename) => 'attachment; filename="' + filename + '"';

Router.prototype.use = function use(fn) {
  this.stack.push(fn);
  return this;
};
"""

TYPESCRIPT = """
import type { AxiosInstance } from "axios";

export const httpClient = {
  async getJson<T>(url: string): Promise<T> {
    return (await fetch(url)).json();
  },
  postForm: async (url: string, body: FormData): Promise<Response> => fetch(url, { method: "POST", body }),
};

export class SearchBox {
  private readonly client: AxiosInstance;

  onQuery = (text: string): void => {
    this.client.get(text);
  };
}

window.onResize = (event: UIEvent): void => {
  console.log(event.timeStamp);
};
"""

# Methods on a type that embeds another: each is its receiver's.
GO = """
package server

type Logger struct{ prefix string }

func (l *Logger) Printf(format string, args ...any) {}

type Server struct {
	*Logger
	http.Handler
	Addr string
}

func (s *Server) ListenAndServe() error {
	return nil
}
"""

# As Linux 6.12's include/linux/slab.h defines kmalloc: a macro right after the inline function it wraps, whose
# parse (the attribute macro in its header) runs on over the macros after its body, up to the next function.
SLAB_H = """
#ifndef _LINUX_SLAB_H
#define _LINUX_SLAB_H

#include <linux/gfp.h>

#define alloc_pages(...)	alloc_hooks(alloc_pages_noprof(__VA_ARGS__))
#define printk(fmt, ...) \\
	printk_index_wrap(_printk, fmt, ##__VA_ARGS__)

/**
 * kmalloc - allocate kernel memory
 * @size: how many bytes of memory are required.
 */
static __always_inline __alloc_size(1) void *kmalloc_noprof(size_t size, gfp_t flags)
{
	if (__builtin_constant_p(size) && size) {
		unsigned int index;

		index = kmalloc_index(size);
		return __kmalloc_cache_noprof(
				kmalloc_caches[kmalloc_type(flags, _RET_IP_)][index],
				flags, size);
	}
	return __kmalloc_noprof(size, flags);
}
#define kmalloc(...)				alloc_hooks(kmalloc_noprof(__VA_ARGS__))

#define kmalloc_obj(VAR_OR_TYPE, GFP)	\\
	__alloc_objs(kmalloc, GFP, typeof(VAR_OR_TYPE), 1)

static __always_inline __alloc_size(1) void *kmalloc_node_noprof(size_t size, gfp_t flags, int node)
{
	return __kmalloc_node_noprof(size, flags, node);
}
#define kmalloc_node(...)			alloc_hooks(kmalloc_node_noprof(__VA_ARGS__))

#endif	/* _LINUX_SLAB_H */
"""

# The userspace stub that used to be kmalloc's only definition.
TOOLS_SLAB_H = """
#include <stdlib.h>

static inline void *kmalloc(size_t size, int flags)
{
	return malloc(size);
}
"""

# Kernel-style C: attributes and macros around declarators, a `#define` inside a function (which sent the
# grammar's error recovery astray for the rest of net/core/dev.c), functions whose header a macro writes, an
# attribute macro the grammar cannot read (mm/slub.c's `static __printf(3, 4) void slab_err(...)`), headers an
# `#if` chooses between (kernel/fork.c's clone).
DEV_C = """
#include <linux/netdevice.h>

static DEFINE_PER_CPU(int, xmit_recursion);
static LIST_HEAD(offload_base);

const char *netdev_cmd_to_name(enum netdev_cmd cmd)
{
#define N(val) 						\\
	case NETDEV_##val:				\\
		return "NETDEV_" __stringify(val);
	switch (cmd) {
	N(UP) N(DOWN) N(REBOOT) N(CHANGE) N(REGISTER) N(UNREGISTER)
	N(CHANGEMTU) N(CHANGEADDR) N(GOING_DOWN) N(CHANGENAME) N(FEAT_CHANGE)
	N(BONDING_FAILOVER) N(PRE_UP) N(PRE_TYPE_CHANGE) N(POST_TYPE_CHANGE)
	N(POST_INIT) N(PRE_UNINIT) N(RELEASE) N(NOTIFY_PEERS) N(JOIN)
	N(CHANGEUPPER) N(RESEND_IGMP) N(PRECHANGEMTU) N(CHANGEINFODATA)
	N(BONDING_INFO) N(PRECHANGEUPPER) N(CHANGELOWERSTATE)
	N(UDP_TUNNEL_PUSH_INFO) N(UDP_TUNNEL_DROP_INFO) N(CHANGE_TX_QUEUE_LEN)
	N(CVLAN_FILTER_PUSH_INFO) N(CVLAN_FILTER_DROP_INFO)
	N(SVLAN_FILTER_PUSH_INFO) N(SVLAN_FILTER_DROP_INFO)
	N(PRE_CHANGEADDR) N(OFFLOAD_XSTATS_ENABLE) N(OFFLOAD_XSTATS_DISABLE)
	N(OFFLOAD_XSTATS_REPORT_USED) N(OFFLOAD_XSTATS_REPORT_DELTA)
	N(XDP_FEAT_CHANGE)
	}
#undef N
	return "UNKNOWN_NETDEV_EVENT";
}
EXPORT_SYMBOL_GPL(netdev_cmd_to_name);

static __latent_entropy void net_rx_action(struct softirq_action *h)
{
	int budget = READ_ONCE(net_hotdata.netdev_budget);
	LIST_HEAD(list);

	for (;;) {
		budget -= napi_poll(n, &repoll);
		if (budget <= 0)
			break;
	}
}

int __init netdev_boot_setup(char *str)
{
	return 1;
}
__setup("netdev=", netdev_boot_setup);

static void rps_unlock_irq_enable(struct softnet_data *sd)
	__releases(&sd->input_pkt_queue.lock)
{
	spin_unlock_irq(&sd->input_pkt_queue.lock);
}

/**
 *	register_netdev	- register a network device
 *	@dev: device to register
 */
int register_netdev(struct net_device *dev)
{
	int err;

	if (rtnl_lock_killable())
		return -EINTR;
	err = register_netdevice(dev);
	rtnl_unlock();
	return err;
}
EXPORT_SYMBOL(register_netdev);

SYSCALL_DEFINE3(socket, int, family, int, type, int, protocol)
{
	return __sys_socket(family, type, protocol);
}

static __printf(3, 4) void netdev_err_once(const struct net_device *dev, int level,
						const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vprintk(format, args);
	va_end(args);
}

#ifdef CONFIG_NET_INGRESS
static int sch_handle_ingress(struct sk_buff *skb)
{
	return tcx_run(skb);
}
#endif

#ifdef CONFIG_CLONE_BACKWARDS
SYSCALL_DEFINE5(clone, unsigned long, clone_flags, unsigned long, newsp,
		int __user *, parent_tidptr,
		unsigned long, tls,
		int __user *, child_tidptr)
#else
SYSCALL_DEFINE5(clone, unsigned long, clone_flags, unsigned long, newsp,
		int __user *, parent_tidptr,
		int __user *, child_tidptr,
		unsigned long, tls)
#endif
{
	return kernel_clone(&args);
}

#ifdef CONFIG_NET_EGRESS
static int sch_handle_egress(struct sk_buff *skb, struct net_device *dev)
{
#else
static int sch_handle_egress_stub(struct sk_buff *skb, struct net_device *dev)
{
#endif
	return tcx_run(skb, dev);
}
"""

FILES = {
    "fastify.js": FASTIFY,
    "lib/response.js": EXPRESS,
    "web/search.ts": TYPESCRIPT,
    "server/server.go": GO,
    "include/linux/slab.h": SLAB_H,
    "tools/include/linux/slab.h": TOOLS_SLAB_H,
    "net/core/dev.c": DEV_C,
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("definitions") / "repo"
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip("\n"))
    worker = Worker(EngineConfig(tmp_path_factory.mktemp("definitions-db") / "index.db")).start()
    try:
        worker.run(ops.index(root)).result(timeout=300)
        yield worker, worker.run(ops.scope_containing(root)).result(timeout=60)
    finally:
        worker.close()


DEFINED = [
    # (path, name, parent, symbol type)
    ("fastify.js", "setErrorHandler", "fastify", "function"),
    ("fastify.js", "setNotFoundHandler", "fastify", "function"),
    ("fastify.js", "addHook", "fastify", "function"),
    ("fastify.js", "route", "fastify", "method"),
    ("lib/response.js", "sendFile", "res", "method"),
    ("lib/response.js", "contentDisposition", None, "function"),
    ("lib/response.js", "use", "Router", "method"),
    ("web/search.ts", "getJson", "httpClient", "method"),
    ("web/search.ts", "postForm", "httpClient", "method"),
    ("web/search.ts", "onResize", "window", "method"),
    ("include/linux/slab.h", "kmalloc", None, "macro"),
    ("include/linux/slab.h", "kmalloc_obj", None, "macro"),
    ("include/linux/slab.h", "kmalloc_noprof", None, "function"),
    ("include/linux/slab.h", "kmalloc_node_noprof", None, "function"),
    ("include/linux/slab.h", "printk", None, "macro"),
    ("net/core/dev.c", "netdev_cmd_to_name", None, "function"),
    ("net/core/dev.c", "register_netdev", None, "function"),
    ("net/core/dev.c", "socket", None, "function"),
]


@pytest.mark.parametrize(("path", "name", "parent", "symbol_type"), DEFINED, ids=[row[1] for row in DEFINED])
def test_a_definition_is_found_by_its_name(engine, path, name, parent, symbol_type):
    """As the agent's find_symbol and Go to Symbol (Ctrl+T) look for it."""
    worker, scope = engine
    found = [
        (h.path, h.symbol_name, h.parent_symbol, h.symbol_type)
        for h in worker.run(ops.definitions(scope, name)).result()
    ]
    assert (path, name, parent, symbol_type) in found
    listed = worker.run(ops.find_symbols(scope, name)).result(timeout=60)
    assert any((h.path, h.symbol_name, h.parent_symbol) == (path, name, parent) for h in listed)


@pytest.mark.parametrize(
    ("query", "path", "symbol_type"),
    [
        ("kmalloc", "include/linux/slab.h", "macro"),  # no longer the userspace stub under tools/
        ("register_netdev", "net/core/dev.c", "function"),
        ("sendFile", "lib/response.js", "method"),
        ("setErrorHandler", "fastify.js", "function"),
    ],
)
def test_a_search_for_the_name_puts_its_definition_first(engine, query, path, symbol_type):
    worker, scope = engine
    request = SearchRequest(query, roots=(scope.root,), k=5, record_history=False)
    first = worker.run(ops.search(request)).result(timeout=60).results[0]
    assert (first.path, first.symbol_name, first.symbol_type) == (path, query, symbol_type)


def test_go_methods_stay_their_receivers_own_beside_embedded_types(engine):
    worker, scope = engine
    for name, parent in (("Printf", "Logger"), ("ListenAndServe", "Server")):
        found = [(h.path, h.parent_symbol, h.symbol_type) for h in worker.run(ops.definitions(scope, name)).result()]
        assert found == [("server/server.go", parent, "method")]


def test_a_macro_is_found_beside_the_userspace_stub_of_the_same_name(engine):
    worker, scope = engine
    found = {(h.path, h.symbol_type) for h in worker.run(ops.definitions(scope, "kmalloc")).result()}
    assert found == {("include/linux/slab.h", "macro"), ("tools/include/linux/slab.h", "function")}


def test_every_function_of_kernel_style_c_keeps_its_name():
    named = symbols(chunks_of(DEV_C, "c", "net/core/dev.c"))
    spans: dict[str, tuple[str, int, int]] = {}
    for name, kind, _, start, end in named:  # a long function's windows make one span
        spans[name] = (kind, spans.get(name, (kind, start, end))[1], end)
    assert spans == {
        "netdev_cmd_to_name": ("function", 6, 27),
        "net_rx_action": ("function", 30, 40),
        "netdev_boot_setup": ("function", 42, 45),
        "rps_unlock_irq_enable": ("function", 48, 52),
        "register_netdev": ("function", 54, 67),  # from its doc comment
        "socket": ("function", 70, 73),  # the function, not its header alone
        "netdev_err_once": ("function", 75, 83),  # an attribute macro with arguments before its type
        "sch_handle_ingress": ("function", 86, 89),
        "clone": ("function", 93, 105),  # the first of the headers an #if chooses between
        "sch_handle_egress": ("function", 108, 115),  # the #if chooses between the headers of one body
    }


def test_a_long_javascript_function_is_opened_into_the_functions_it_declares():
    chunks = chunks_of(FASTIFY, "javascript", "fastify.js")
    outer = [(c.start_line, c.end_line) for c in chunks if c.symbol_name == "fastify" and c.parent_symbol is None]
    nested = {c.symbol_name for c in chunks if c.parent_symbol == "fastify"}
    assert outer[0][0] == 6 and {"addHook", "setNotFoundHandler", "setErrorHandler"} <= nested
    # Its own statements between them are still windows of it, not anonymous code.
    assert (25, 32) in outer  # `Object.defineProperties(...)` and `return fastify`
    assert not [c for c in chunks if 6 <= c.start_line <= 59 and c.symbol_name is c.parent_symbol is None]
    # A function that fits one chunk stays whole, its closures in it, as before.
    small = chunks_of("function outer() {\n  function inner() { return 1 }\n  return inner()\n}\n", "javascript")
    assert symbols(small) == [("outer", "function", None, 1, 4)]
