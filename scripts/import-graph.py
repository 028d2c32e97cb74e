#!/usr/bin/env python3
# The import graph of each crate's modules: every "module -> module it imports from"
# edge (use declarations and crate::/super:: paths in code, comments and test modules
# left out), the crate root (`crate`, its lib.rs) included: a root that re-exports a
# module's items has an edge to it, and a module that imports through the root (an
# item defined or re-exported there) an edge back, as does a parent that uses its
# child's items and a child its parent's. Then the cycles; exits 1 if any crate has
# one (`make test` runs it: imports run one way).
# Usage: scripts/import-graph.py [SOURCE_DIR...]   (default: every crate's src)
import os
import re
import sys

here=os.path.join(os.path.dirname(__file__), "..")
dirs=sys.argv[1:] or [os.path.join(here,d) for d in ('src', 'core/src', 'loader/src', 'default-bits/src', 'table/src', 'cli/src')]
any_cycle=False
for src_dir in dirs:
  mods={}
  for dp,_,fs in os.walk(src_dir):
    for f in fs:
        if not f.endswith('.rs'): continue
        p=os.path.join(dp,f); rel=os.path.relpath(p,src_dir)[:-3]
        parts=rel.split('/')
        if parts[-1] in ('mod','lib'): parts=parts[:-1]
        mods['::'.join(parts) or 'crate']=open(p).read()
  def resolve(cur, path):
      segs=path.split('::')
      base=cur.split('::') if cur!='crate' else []
      if segs[0]=='crate': base=[]; segs=segs[1:]
      elif segs[0] in ('super','self'):
          while segs and segs[0] in ('super','self'):
              if segs[0]=='super': base=base[:-1]
              segs=segs[1:]
      else:
          # child module or extern
          cand='::'.join(base+[segs[0]])
          if cand in mods: base=base
          else: return None
      # longest prefix that is a module
      best=None
      for i in range(len(segs),0,-1):
          m='::'.join(base+segs[:i])
          if m in mods: best=m; break
      return best or ('::'.join(base) or 'crate')
  edges=set()
  for m,src in mods.items():
      src=re.sub(r'#\[cfg\(test\)\]\s*mod tests \{.*','',src,flags=re.S)
      src=re.sub(r'//.*','',src)
      for u in re.findall(r'^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);',src,flags=re.M):
          u=u.replace('\n',' ')
          head=u.split('{')[0].strip().rstrip(':')
          heads=[head]
          if '{' in u:
              inner=u[u.index('{')+1:u.rindex('}')]
              heads=[head+'::'+x.strip().split(' ')[0] for x in re.split(r',(?![^{]*\})',inner) if x.strip()]
          for h in heads:
              h=h.replace('::self','')
              t=resolve(m,h)
              if t and t!=m: edges.add((m,t))
      for u in re.findall(r'\b(?:crate|super)::(?:\w+::)*\w+',src):
          t=resolve(m,u)
          if t and t!=m: edges.add((m,t))
  # cycles: pairs reachable both ways

  adj={}
  for a,b in edges: adj.setdefault(a,set()).add(b)
  def reach(a):
      seen=set(); st=[a]
      while st:
          x=st.pop()
          for y in adj.get(x,()):
              if y not in seen: seen.add(y); st.append(y)
      return seen
  cyc=sorted({tuple(sorted((a,b))) for a in adj for b in reach(a) if a in reach(b) and a!=b})
  print(f"{os.path.relpath(src_dir, here)}:")
  for a,b in sorted(edges): print(f"  {a} -> {b}")
  print("cycles:", cyc if cyc else "none")
  any_cycle = any_cycle or bool(cyc)
sys.exit(1 if any_cycle else 0)
