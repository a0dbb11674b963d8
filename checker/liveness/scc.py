"""Tarjan's strongly connected components, iterative, over CSR arrays restricted to a node subset.

No recursion (a million-state chain would blow Python's stack): the DFS keeps its own stack of
(node, next edge) pairs. Memory: two 4-byte arrays and a byte per node of the graph, plus the
stacks. Components come out in reverse topological order (a component before any that reaches it).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence


def tarjan(offsets: Sequence[int], targets: Sequence[int], inside: bytearray, roots: Iterable[int],
           emit: Callable[[list[int]], bool]) -> bool:
    """Call ``emit(members)`` for each SCC of the subgraph on ``inside`` nodes reachable from
    ``roots``; stops and returns True as soon as ``emit`` returns True."""
    n = len(inside)
    index = array("i", [-1]) * n
    low = array("i", [0]) * n
    on_stack = bytearray(n)
    stack: list[int] = []
    counter = 0
    for root in roots:
        if not inside[root] or index[root] != -1:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = 1
        call_v = [root]
        call_e = [offsets[root]]
        while call_v:
            v = call_v[-1]
            e = call_e[-1]
            end = offsets[v + 1]
            lv = low[v]
            descended = False
            while e < end:
                w = targets[e]
                e += 1
                if not inside[w]:
                    continue
                iw = index[w]
                if iw == -1:
                    low[v] = lv
                    call_e[-1] = e
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = 1
                    call_v.append(w)
                    call_e.append(offsets[w])
                    descended = True
                    break
                if on_stack[w] and iw < lv:
                    lv = iw
            if descended:
                continue
            low[v] = lv
            call_v.pop()
            call_e.pop()
            if call_v:
                p = call_v[-1]
                low[p] = min(low[p], lv)
            if lv == index[v]:
                w = stack.pop()
                on_stack[w] = 0
                if w == v:
                    comp = [v]
                else:
                    comp = [w]
                    while w != v:
                        w = stack.pop()
                        on_stack[w] = 0
                        comp.append(w)
                if emit(comp):
                    return True
    return False
