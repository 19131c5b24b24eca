/** RAFT lives in src/methods/raft.ts (its selection, offline demos, reward-stage filter and loss). */
export { collectRaftDemos, makeRaftLoss, raftFilter, selectForRaft, selectForRaftGroups, type RaftSelect } from "../methods/raft.ts";
