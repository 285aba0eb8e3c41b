import dagre from '@dagrejs/dagre';
import {
  Background,
  Controls,
  type Edge,
  Handle,
  MarkerType,
  type Node,
  type NodeProps,
  Position,
  ReactFlow,
  useNodesState,
} from '@xyflow/react';
import { useEffect, useMemo } from 'react';
import type { TaskGraph } from '../model/task-graph';
import type { TaskStatus } from '../model/task-states';
import { Link } from '../router';

const NODE_W = 210;
const NODE_H = 78;

/** What a node of the graph shows: the task, and its live status on an execution page. */
export interface TaskNodeData extends Record<string, unknown> {
  readonly name: string;
  readonly kind: string;
  readonly status?: TaskStatus;
  readonly childExecutionId?: string;
  readonly selected?: boolean;
}

function TaskNode({ data }: NodeProps<Node<TaskNodeData>>) {
  const s = data.status;
  const state = s?.state ?? null;
  return (
    <div
      className={`task-node${state ? ` state-border-${state.toLowerCase().replace(/[^a-z]+/g, '-')}` : ''}${data.selected ? ' task-node-selected' : ''}`}
      data-testid={`task-node-${data.name}`}
      data-state={state ?? undefined}
    >
      <Handle type="target" position={Position.Top} />
      <div className="task-node-name">{data.name}</div>
      <div className="task-node-kind">{data.kind}</div>
      {state && (
        <div className="task-node-status">
          <span className="task-node-state">{state}</span>
          {s?.withItems && (
            <span className="task-node-items">
              {' '}
              items {s.withItems.done}/{s.withItems.total}
            </span>
          )}
          {s && s.retryNo > 0 && <span className="task-node-retries"> retry {s.retryNo}</span>}
          {data.childExecutionId && (
            <span className="task-node-child">
              {' '}
              <Link to={`/executions/${data.childExecutionId}`}>sub-workflow ↗</Link>
            </span>
          )}
        </div>
      )}
      <Handle type="source" position={Position.Bottom} />
    </div>
  );
}

const NODE_TYPES = { task: TaskNode };

const EDGE_COLOURS = {
  'on-success': '#2e7d32',
  'on-error': '#c62828',
  'on-complete': '#1565c0',
  requires: '#555',
} as const;

/** The task graph laid out top-down by dagre and drawn by React Flow (pan, zoom; click a task to select it). */
export function TaskGraphView({
  graph,
  statuses,
  childExecutions,
  selected,
  onSelect,
}: {
  graph: TaskGraph;
  statuses?: readonly TaskStatus[];
  childExecutions?: ReadonlyMap<string, string>;
  selected?: string | null;
  onSelect?: (task: string) => void;
}) {
  const layout = useMemo(() => {
    const g = new dagre.graphlib.Graph();
    g.setGraph({ rankdir: 'TB', nodesep: 40, ranksep: 60 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const t of graph.tasks) g.setNode(t.name, { width: NODE_W, height: NODE_H });
    for (const e of graph.edges) g.setEdge(e.from, e.to);
    dagre.layout(g);
    return new Map(graph.tasks.map((t) => [t.name, g.node(t.name)] as const));
  }, [graph]);

  const nodes: Node<TaskNodeData>[] = graph.tasks.map((t) => {
    const p = layout.get(t.name);
    const flags = [t.withItems ? 'with-items' : null, t.retry ? 'retry' : null, t.join ? 'join' : null]
      .filter(Boolean)
      .join(', ');
    return {
      id: t.name,
      type: 'task',
      position: { x: (p?.x ?? 0) - NODE_W / 2, y: (p?.y ?? 0) - NODE_H / 2 },
      data: {
        name: t.name,
        kind: `${t.workflow ? `workflow ${t.workflow}` : (t.action ?? 'no action')}${flags ? ` · ${flags}` : ''}`,
        status: statuses?.find((s) => s.name === t.name),
        childExecutionId: childExecutions?.get(t.name),
        selected: selected === t.name,
      },
    };
  });
  // React Flow keeps each node's measured size on the node objects it holds: new states replace
  // the data of the nodes it has, never the nodes themselves (a node without a size is hidden).
  const [flowNodes, setFlowNodes, onNodesChange] = useNodesState<Node<TaskNodeData>>(nodes);
  const nodesKey = JSON.stringify(
    nodes.map((n) => [
      n.id,
      n.position,
      n.data.status?.state,
      n.data.status?.withItems,
      n.data.status?.retryNo,
      n.data.childExecutionId,
      n.data.selected,
    ]),
  );
  useEffect(() => {
    setFlowNodes((prev) => nodes.map((n) => ({ ...prev.find((p) => p.id === n.id), ...n })));
  }, [nodesKey]); // `nodes` is new on every render; its content is nodesKey
  const edges: Edge[] = graph.edges.map((e, i) => ({
    id: `${e.from}-${e.to}-${e.kind}-${i}`,
    source: e.from,
    target: e.to,
    label: e.kind === 'requires' ? undefined : e.condition ? `${e.kind} ${e.condition}` : e.kind,
    style: { stroke: EDGE_COLOURS[e.kind] },
    labelStyle: { fontSize: 11 },
    markerEnd: { type: MarkerType.ArrowClosed, color: EDGE_COLOURS[e.kind] },
  }));

  return (
    <div className="graph" aria-label="task graph">
      <ReactFlow
        nodes={flowNodes}
        onNodesChange={onNodesChange}
        edges={edges}
        nodeTypes={NODE_TYPES}
        fitView
        nodesDraggable={false}
        nodesConnectable={false}
        onNodeClick={(_e, node) => onSelect?.(node.id)}
        proOptions={{ hideAttribution: true }}
      >
        <Background />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
