"""General-language words that say little about what a prompt is about.

Recall decides whether a prompt is "about" something in the memory store by the share of
the prompt's informative words that a memory matches. Chatty prompts ("can you pull every
open issue and write a CSV, set up the usual stuff") are mostly everyday words, so the
words listed here weigh little and the rest (worktree, tokenizer, alembic, csv, ...) weigh a
lot.

COMMON holds lowercase, accent-free tokens as the query tokenizer produces them (split on
non-alphanumerics, so contractions appear as their fragments: "don", "isn", "ll"): the most
frequent everyday English words in their common inflections, everyday Portuguese words, and
the generic software-conversation words found in almost any developer prompt (code, file,
error, fix, test, build, ...). Technology, product, protocol and domain words (git, docker,
sql, regex, token, deploy, cache, webhook, invoice, login, email, push, release, ...) are
deliberately absent: they are what a prompt is about.

No imports: this module sits on the prompt path and must load in well under a millisecond.
"""

COMMON = frozenset("""
about above across after afterwards again against ago ahead all almost alone along already
also although always am among amongst an and another any anybody anyhow anyone anything
anyway anyways anywhere apart are aren around as aside at away back be became because become
becomes becoming been before beforehand behind being below beside besides between beyond
both but by can cannot cant could couldn did didn do does doesn doing don done down during
each either else elsewhere enough etc even ever every everybody everyone everything
everywhere except few for former formerly from further furthermore had hadn has hasn have
haven having he hence her here hereby herein hers herself him himself his how however if in
indeed inside instead into is isn it its itself just last latter least less let lets ll many
may maybe me meanwhile might mine more moreover most mostly much must mustn my myself namely
neither never nevertheless next no nobody none noone nor not nothing now nowhere of off often
on once one ones only onto or other others otherwise our ours ourselves out outside over own
per perhaps quite rather re really same several shall shan she should shouldn since so some
somebody somehow someone something sometime sometimes somewhat somewhere still such than that
thats the their theirs them themselves then thence there thereafter thereby therefore therein
theres these they this those though through throughout thru thus till to together too toward
towards under unless unlike until up upon us ve very via vs was wasn we well were weren what
whatever whats when whenever where whereas wherever whether which while who whoever whole
whom whose why will with within without won would wouldn yet you your yours yourself
yourselves im ive id youre youve theyre dont doesnt didnt wont isnt arent wasnt shouldnt
wouldnt couldnt hows whys wheres heres tho although though unless whereby

ok okay yes yeah yep yup nope nah hi hey hello thanks thank please sorry sure cheers bye
alright right wrong true false correct exactly indeed agreed hmm oh ah wow oops lol haha btw
fyi asap pls plz thx

zero two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
hundred hundreds thousand thousands million millions billion dozen dozens half quarter
double triple single first second third fourth fifth sixth seventh eighth ninth tenth once
twice number numbers count counts counted counting total totals percent couple pair pairs

time times day days daily week weeks weekly weekend weekends month months monthly year years
yearly hour hours hourly minute minutes second seconds moment moments today tonight tomorrow
yesterday morning mornings afternoon evening evenings night nights noon midnight now soon
later earlier early late lately recently recent currently current past future present date
dates season seasons spring summer autumn fall winter monday tuesday wednesday thursday
friday saturday sunday january february march april june july august september october
november december period periods while until since before after during meantime deadline
schedule scheduled calendar age ages century decade decades era

thing things stuff way ways bit bits lot lots kind kinds sort sorts type types part parts
piece pieces place places point points side sides end ends start starts beginning middle
top bottom front back left right center centre inside outside edge edges corner corners area
areas space spaces level levels order orders case cases example examples sample samples
instance detail details fact facts idea ideas reason reasons result results effect effects
cause causes purpose goal goals plan plans step steps stage_ list lists group groups set sets
item items option options choice choices chance chances matter matters issue issues problem
problems question questions answer answers solution solutions situation state states status
form forms shape shapes size sizes amount amounts range ranges rate rates line lines row rows
column columns table tables box boxes field fields label labels title titles name names word
words sentence sentences paragraph paragraphs text texts letter letters note notes page pages
section sections chapter chapters book books story stories article articles document
documents paper papers copy copies draft drafts version versions edition series

people person persons man men woman women child children kid kids boy boys girl girls baby
family families friend friends parent parents mother father mom dad brother sister son
daughter wife husband guy guys folks someone human humans member members team teams staff
boss manager managers colleague colleagues partner partners customer customers owner owners
worker workers student students teacher teachers neighbor neighbors stranger crowd everybody
community society public

house houses home homes room rooms kitchen bathroom bedroom office offices building
buildings street streets road roads city cities town towns country countries world state
place village area region land earth ground floor floors wall walls door doors window roof
garden park school schools church hospital shop shops store stores market restaurant hotel
station airport farm field beach river lake sea ocean mountain hill forest island sky sun
moon star stars weather rain snow wind air water fire tree trees flower flowers grass stone
rock sand

thing object objects tool tools machine machines car cars bus train plane bike boat truck
phone phones mobile computer computers laptop screen screens keyboard mouse camera picture
pictures photo photos image images video videos music song songs movie movies film show
shows game games ball toy card cards gift bag bags box cup cups glass bottle plate table
chair chairs bed desk lamp clock watch pen pencil paper map ticket tickets money cash price
prices cost costs bill bills food foods meal meals breakfast lunch dinner coffee tea milk
bread meat fish fruit egg eggs sugar salt water drink drinks wine beer clothes shirt shoes
hat dress coat pocket

body head face eye eyes ear ears nose mouth hand hands arm arms leg legs foot feet finger
fingers heart blood skin hair back health pain sick ill doctor life lives death birth

good better best bad worse worst great greater greatest nice nicer nicest fine okay cool
big bigger biggest small smaller smallest large larger largest little tiny huge long longer
longest short shorter shortest high higher highest low lower lowest tall wide narrow deep
full empty heavy light fast faster fastest slow slower slowest quick quicker quickly slowly
easy easier easiest hard harder hardest simple simpler simplest complex difficult new newer
newest old older oldest young younger fresh clean dirty clear cleaner clearer hot cold warm
cool dry wet soft strong weak rich poor cheap expensive free busy ready happy sad glad angry
afraid tired sorry sure certain possible impossible likely unlikely real true false right
wrong correct exact important main major minor basic general common usual unusual normal
special particular specific similar different same other another whole entire complete
partial total final initial original previous next last following early late open closed
close near far nearby local own certain various several enough extra additional separate
single whole free proper regular random strange weird funny odd serious safe dangerous
beautiful ugly pretty lovely nice awesome amazing perfect terrible horrible awful excellent
fantastic wonderful interesting boring useful useless helpful careful obvious visible hidden
available ready able unable likely black white red blue green yellow orange purple pink
brown gray grey dark bright color colors colour colours

very really quite pretty rather too so just only even still already again also always never
often sometimes usually normally generally typically mostly probably maybe perhaps actually
basically literally simply clearly certainly definitely totally fully completely entirely
exactly nearly almost hardly barely mainly mostly especially particularly specifically
directly immediately finally eventually suddenly quickly slowly easily properly correctly
badly better instead anyway otherwise however therefore though yet somehow somewhere
anywhere everywhere nowhere together apart alone ahead forward backward backwards away
around here there upstairs downstairs abroad home online offline tonight lately recently
currently initially originally previously soon later meanwhile manually automatically

be is am are was were been being have has had having do does did done doing go goes went
gone going get gets got gotten getting make makes made making take takes took taken taking
give gives gave given giving put puts putting say says said saying tell tells told telling
ask asks asked asking see sees saw seen seeing look looks looked looking watch watches
watched watching know knows knew known knowing think thinks thought thinking feel feels felt
feeling want wants wanted wanting need needs needed needing like likes liked liking love
loves loved hate hates hated come comes came coming leave leaves left leaving keep keeps kept
keeping let lets letting seem seems seemed mean means meant try tries tried trying call calls
called calling find finds found finding show shows showed shown showing hear hears heard
hearing play plays played playing turn turns turned turning move moves moved moving live
lives lived living believe believes believed hold holds held holding bring brings brought
bringing happen happens happened happening write writes wrote written writing read reads
reading sit sits sat sitting stand stands stood standing lose loses lost losing pay_ meet
meets met meeting meetings include includes included including continue continues continued
continuing learn learns learned learning lead leads led leading understand understands
understood understanding follow follows followed following stop stops stopped stopping
create creates created creating speak speaks spoke spoken speaking talk talks talked talking
spend spends spent spending grow grows grew grown growing open opens opened opening walk
walks walked walking win wins winning offer offers offered offering remember remembers
remembered remembering forget forgets forgot forgotten forgetting consider considers
considered considering appear appears appeared appearing buy buys bought buying wait waits
waited waiting serve_ die dies died send sends sent sending expect expects expected
expecting stay stays stayed staying fall falls fell fallen falling cut cuts cutting reach
reaches reached reaching kill remain remains remained suggest suggests suggested suggesting
raise raises raised raising pass passes passed passing sell sells sold selling require
requires required requiring decide decides decided deciding return returns returned
returning explain explains explained explaining hope hopes hoped hoping carry carries carried
carrying break breaks broke broken breaking agree agrees agreed receive receives received
receiving pull pulls pulled pulling drop drops dropped dropping pick picks picked picking
wish wishes wished fill fills filled filling check checks checked checking fix fixes fixed
fixing help helps helped helping helpful use uses used using useful work works worked
working run runs ran running start starts started starting begin begins began begun
beginning end ends ended ending finish finishes finished finishing change changes changed
changing add adds added adding remove removes removed removing delete deletes deleted
deleting edit edits edited editing update updates updated updating replace replaces
replaced replacing rename renames renamed renaming save saves saved saving load loads
loaded loading close closes closed closing clear clears cleared clearing clean cleans
cleaned cleaning move copy copies copied copying paste pasted pasting print prints printed
printing set sets setting settings setup reset resets try test tests tested testing build
builds built building install installs installed installing download downloads downloaded
downloading upload uploads uploaded uploading import imports imported importing export
exports exported exporting share shares shared sharing search searches searched searching
sort sorts sorted sorting filter filters filtered filtering list listed listing count
compare compares compared comparing match matches matched matching mark marks marked marking
point pointed pointing click clicks clicked clicking press pressed type typed typing select
selects selected selecting choose chooses chose chosen choosing pick apply applies applied
applying handle handles handled handling manage manages managed managing track tracks
tracked tracking record records recorded recording store stored storing keep save touch
touches touched fit fits fitted fitting hit hits hitting catch catches caught catching throw
throws threw thrown throwing draw draws drew drawn drawing fly flies flew flying drive
drives drove driven driving ride rides rode eat eats ate eaten eating drink drinks drank
sleep sleeps slept sleeping wake woke wear wears wore worn sing sang dance teach teaches
taught teaching study studies studied studying plan planned planning prepare prepares
prepared preparing improve improves improved improving increase increases increased
decrease reduce reduces reduced reducing avoid avoids avoided avoiding allow allows allowed
allowing accept accepts accepted accepting answer answered answering reply replies replied
describe describes described describing discuss discussed discussing mention mentions
mentioned mentioning notice noticed noticing note noted realize realized realise realised
guess guessed guessing wonder wondering imagine imagined prefer prefers preferred enjoy
enjoyed worry worried care cares cared caring mind minds matter mattered depend depends
depended depending belong belongs contain contains contained containing involve involves
involved cover covers covered covering join joins joined joining fold split splits
splitting connect connects connected connecting attach attached link links linked linking
form formed support supports supported supporting provide provides provided providing
produce_ produced_ control controlled explore explored feed fed grab grabs grabbed grabbing
hang hung hide hides hid hidden hiding jump jumped kick knock lay laid lie lies lying lift
lock locked unlock mix mixed pour push_ rest shake shook shut slide slip spin spread
squeeze stick stuck swing tie wrap wrapped fold folded bend bent burn burned dig drag
dragged float hurry rush rushed pack packed unpack wash washed cook cooked fry bake boil
heat heated cool cooled freeze froze frozen melt repair repaired tidy organize organized
organise sorted arrange arranged gather gathered collect collected collecting combine
combined separate separated divide divided double doubled measure measured weigh check
confirm confirmed confirming verify verified ensure make sure finish fail fails failed
failing succeed succeeded miss misses missed missing lack lacks lacked forgot skip skips
skipped skipping ignore ignores ignored ignoring repeat repeats repeated repeating reuse
reused retry retried redo undo happen wonder test

do_ can could will would shall should may might must ought need dare used

use_ help_ get_ seems_

goes happened becomes became become got gives
""".replace("_", "").split() + """
code codes coding coded file files folder folders directory directories path paths function
functions method methods error errors bug bugs fix fixes issue issues test tests testing run
runs running build builds building change changes add update updates new old work works
working thing way example examples version versions value values line lines page pages data
user users app apps application applications project projects setup set use using help
question problem simple quick faster better tool tools script scripts command commands option
options output outputs input inputs result results message messages warning warnings log_
default defaults feature features program programs software system systems site sites
website websites web online screen button buttons menu menus link links tab tabs window
click text format formats formatted template templates document docs doc note notes report
reports summary summaries overview draft list table row column field fields record records
item items entry entries detail details info information content contents description
descriptions comment comments title label name names id ids number string strings character
characters letter word words size length width height count style styles design designs
layout_ color font fonts icon icons logo image images photo photos picture video videos
audio sound file upload download share print copy paste select search sort filter view views
preview show hide display displayed open close save load start stop restart
run rerun check verify step steps process processes task tasks job jobs part parts piece
module_ library_ package_ step workflow_ flow flows idea plan plans goal goals requirement
requirements spec_ specs_ docs readme_ manual guide guides tutorial tips tip trick tricks
note mode modes setting settings preference preferences option choice choices account_
profile profiles team teams person people group groups member members owner customer
customers client_ support help helper helpers tool utility_ stuff things part

work worked worker workers working job jobs task tasks meeting meetings call calls chat
chats talk talks conversation conversations discussion message messages reply replies
answer answers feedback comment comments request requests response_ ask question questions

usual usually known unknown helping nicer simple phone month nothing section build write
open pull set stuff everything anything something
""".split() + """
a_ o os um uma uns umas de do da dos das na nas em no num numa ao aos pelo pela pelos pelas
para pra pro pros por com sem sob sobre entre ate desde que quem qual quais quando onde
como porque pq ou mas nem se ja tambem muito muita muitos muitas pouco pouca poucos poucas
mais menos tao tanto tanta tantos tantas eu tu ele ela nos vos eles elas voce voces vc vcs
te lhe lhes meu minha meus minhas teu tua seu sua seus suas nosso nossa nossos nossas dele
dela deles delas esse essa esses essas este esta estes estas isso isto aquele aquela
aqueles aquelas aquilo aqui ai ali la ca nao sim ainda agora depois antes entao assim tipo
logo sempre nunca talvez quase bem mal apenas somente so cada outro outra outros outras
mesmo mesma mesmos mesmas algum alguma alguns algumas nenhum nenhuma qualquer quaisquer
todo toda todos todas tudo nada algo alguem ninguem varios varias proprio propria durante
enquanto porem contudo alem embora caso senao tal tais junto perto longe dentro fora cima
baixo frente atras lado depois ontem hoje amanha cedo tarde noite manha

ser sou es somos sao era eram foi fui foram seja sendo sido estar estou esta estamos estao
estava estavam esteve estive estando ter tenho tem temos tinha tinham teve tive tido tendo
haver ha havia houve ir vou vai vamos vao ia fui indo ido fazer faco faz fazemos fazem fiz
fez fizeram feito feita fazendo faca facam fazia poder posso pode podemos podem podia pude
pudesse querer quero quer queremos querem queria quis precisar preciso precisa precisamos
precisam precisava dever devo deve devemos devem devia dar dou da damos dao deu dei dado
dando ver vejo ve vemos vi viu visto vendo veja vejam olhar olha olhe olhei olhando achar
acho acha achei achou achamos saber sei sabe sabemos sabia soube dizer digo diz disse
dito falar falo fala falou falei falando usar uso usa usamos usou usei usado usando criar
crio cria criou criei criado criando mudar mudo muda mudou mudei mudado mudando mudanca
mudancas editar edito edita editou editei editado editando enviar envio envia enviou enviei
enviado enviando mandar mando manda mandou mandei mandado colocar coloco coloca colocou
coloquei colocado colocando pegar pego pega pegou peguei pegando puxar puxo puxa puxou puxei
puxando rodar rodo roda rodou rodei rodando testar testo testa testou testei testando
corrigir corrijo corrige corrigiu corrigi corrigido arrumar arruma arrumou arrumei arrumado
ajustar ajusta ajustou ajustei ajuste ajustes adicionar adiciona adicionou adicionei
adicionado remover remove removeu removi removido tirar tira tirou tirei apagar apaga
apagou apaguei apagado deixar deixo deixa deixou deixei voltar volto volta voltou voltei
abrir abro abre abriu abri aberto aberta fechar fecha fechou fechei fechado fechada salvar
salva salvou salvei salvo subir sobe subiu subi baixar baixa baixou baixei mostrar mostra
mostrou mostrei ajudar ajuda ajudou ajude verificar verifica verificou conferir confere
checar checa lembrar lembra lembrou lembro lembrei esquecer esquece esqueceu esqueci
continuar continua continuou comecar comeca comecou comecei terminar termina terminou
terminei acabar acaba acabou acabei funcionar funciona funcionou funcionando quebrar quebra
quebrou quebrado trocar troca trocou troquei escrever escreve escreveu escrevi escrito ler
leio le leu li lido gerar gera gerou gerei gerado buscar busca buscou procurar procura
procurou encontrar encontra encontrou encontrei passar passa passou passei chegar chega
chegou entrar entra entrou sair sai saiu levar leva levou trazer traz trouxe seguir segue
seguiu tentar tenta tentou tentei conseguir consegue conseguiu consegui entender entende
entendeu entendi explicar explica explicou pensar pensa pensei gostar gosta gosto gostei
esperar espera esperou resolver resolve resolveu resolvi melhorar melhora melhorou
atualizar atualiza atualizou atualizei organizar organiza separar separa juntar junta
copiar copia copiou colar cola colou mover move moveu limpar limpa limpou montar monta
preparar prepara comprar compra vender vende pagar_ ficar fica ficou fico parar para_ parou
acontecer acontece aconteceu conhecer conhece chamar chama chamou trabalhar trabalha
trabalhando perguntar pergunta perguntou responder responde respondeu escolher escolhe
escolheu marcar marca marcou incluir inclui incluiu manter mantem manteve contar conta_
servir serve sentir sinto acredito parece parecer

coisa coisas vez vezes dia dias semana semanas mes meses ano anos hora horas minuto minutos
segundo segundos tempo momento semana fim inicio meio data prazo pessoa pessoas gente homem
mulher filho filha amigo amiga amigos familia pai mae chefe colega colegas equipe time
cliente clientes usuario usuarios dono texto textos mensagem mensagens nome nomes tela telas
botao botoes pagina paginas arquivo arquivos pasta pastas codigo codigos erro erros problema
problemas pergunta perguntas resposta respostas exemplo exemplos parte partes lado lugar
casa trabalho empresa projeto projetos tarefa tarefas lista listas item itens tabela
tabelas campo campos valor valores numero numeros linha linhas coluna colunas palavra
palavras frase frases titulo imagem imagens foto fotos video videos cor cores tamanho forma
jeito modo caso casos ideia ideias ponto pontos versao teste testes funcao dado dados
informacao informacoes dinheiro preco ajuda duvida duvidas detalhe detalhes passo passos
etapa etapas processo sistema site celular telefone computador reuniao documento
documentos relatorio resumo nota notas comentario comentarios conversa assunto motivo
resultado resultados opcao opcoes escolha configuracao_ padrao jeito agua comida cidade rua
pais mundo escola livro carro mesa porta janela papel cartao coisa estilo fonte letra
letras grupo grupos tipo tipos ordem nivel total metade

bom boa bons boas ruim ruins melhor melhores pior piores grande grandes pequeno pequena
pequenos pequenas novo nova novos novas velho velha velhos antigo antiga certo certa
errado errada facil faceis dificil rapido rapida lento lenta simples igual iguais diferente
diferentes importante possivel impossivel pronto pronta claro clara obvio normal geral
principal unico unica vazio vazia cheio cheia bonito bonita feio maior menor primeiro
primeira segunda terceiro ultimo ultima proximo proxima anterior atual mesmo legal otimo
chato estranho correto completo inteiro livre ocupado feliz triste

um dois duas tres quatro cinco seis sete oito nove dez onze doze vinte trinta cem mil
segunda terca quarta quinta sexta sabado domingo janeiro fevereiro marco abril maio junho
julho agosto setembro outubro novembro dezembro

obrigado obrigada valeu beleza oi ola tchau opa por_favor favor desculpa desculpe
""".replace("_", " ").split())
